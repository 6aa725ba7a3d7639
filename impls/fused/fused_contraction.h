#pragma once
// The contraction index and the wgmma path's shared-memory addressing, as plain functions of the
// plan's parameters: the kernel calls them, and the plan test checks on the host that the
// descriptors' canonical layout reads what the fill wrote (tests/unit/fused_plan_test.cpp).
#include "impls/fused/fused_params.h"

#ifdef __CUDACC__
#define MTABENCH_HD __host__ __device__
#else
#define MTABENCH_HD
#endif

namespace mtabench::fused {

// Contraction index kk (over window rows u, window columns v < KW, channels c; channels
// fastest) to its parts.
struct KIndex {
  int u, v, c;
  bool pad;
};
MTABENCH_HD inline KIndex split_k(const FusedParams& p, int kk) {
  KIndex x;
  if (p.fill4) {  // chunks of two columns x four channels, (u, column pair) with pairs fastest
    const int ch = kk >> 3, e = kk & 7;
    x.pad = ch >= p.NCH;
    const int cc = x.pad ? 0 : ch;
    x.u = cc / p.NPAIR;
    // Window column: the row's chunks start one column early when r is odd (-1 meets a zero
    // weight, as do columns past KW).
    x.v = 2 * (cc - x.u * p.NPAIR) + (e >> 2) - (p.r & 1);
    x.c = e & 3;
    return x;
  }
  if (p.ldsm) {  // chunks of 8 channels at one tap, (u, v, channel group) with groups fastest
    const int ch = kk >> 3, G = p.Cp >> 3;
    x.pad = ch >= p.NCH;
    const int cc = x.pad ? 0 : ch, uv = cc / G;
    x.c = (cc - uv * G) * 8 + (kk & 7);
    x.u = uv / p.K;
    x.v = uv - x.u * p.K;
    return x;
  }
  x.pad = kk >= p.Kreal;
  const int kc = x.pad ? 0 : kk;
  const int uv = kc / p.Cp;
  x.c = kc - uv * p.Cp;
  x.u = uv / p.KW;
  x.v = uv - x.u * p.KW;
  return x;
}

// ---- four-channel vector fill (fill4, fused_tiles.cuh) --------------------------------------
// Task (halo row pr, vector v) writes its 64 bytes (eight columns x four channels, four 16-byte
// chunks, in order) from tile byte fill4_tile_byte. A warp's 16-byte shared-memory stores are
// served a quarter-warp (8 lanes) at a time, one wavefront per distinct address in each of the
// eight 16-byte bank groups. v21: a quarter's 8 tasks are 4 rows x 2 adjacent vectors, and a
// tile row is an odd number of 16-byte units past a multiple of 8 (PW = TJ + 18 columns of 8
// bytes: 73 units at TJ 128), so the quarter's 8 tasks start in 8 different bank groups and
// every store is one wavefront per quarter. (v14's row-major quarters, 8 vectors of one row
// 64 bytes apart, hit 2 groups: 4 wavefronts; v18 cured that by rotating each lane's store
// order, 32 selects per task.) A warp's 4 quarters are adjacent vector pairs of the same 4 rows,
// so its 16-byte loads read 128 contiguous bytes of each row (v17's 16 rows per load: +7%).
struct Fill4Slot {
  int pr, v;
};
MTABENCH_HD inline int fill4_vectors(const FusedParams& p) { return p.TJ / 8 + 2; }  // per halo row, even
// Halo rows rounded up to a multiple of 4: the tile's extra rows are written (zeros), never read.
MTABENCH_HD inline int fill4_rows(const FusedParams& p) { return (p.R + 2 * p.r + 3) / 4 * 4; }
MTABENCH_HD inline int fill4_tasks(const FusedParams& p) { return fill4_rows(p) * fill4_vectors(p); }
// ceil(2^32 / d): q * magic >> 32 = q / d for the few thousand q a tile has (checked by the plan
// test); a multiply-high instead of the ten-instruction integer division.
inline unsigned fill4_magic(int d) { return static_cast<unsigned>((0x100000000ull + d - 1) / d); }
MTABENCH_HD inline Fill4Slot fill4_task(const FusedParams& p, int task) {
  const unsigned quarter = static_cast<unsigned>(task) >> 3, pairs = static_cast<unsigned>(fill4_vectors(p) / 2);
  const unsigned quad = static_cast<unsigned>((static_cast<unsigned long long>(quarter) * p.fill4_magic) >> 32);
  return {static_cast<int>(4 * quad + ((task >> 1) & 3)), static_cast<int>(2 * (quarter - quad * pairs) + (task & 1))};
}
MTABENCH_HD inline int fill4_tile_byte(const FusedParams& p, int pr, int v) { return (pr * p.PW + 8 * v) * 8; }

// ---- wgmma path (fused_wgmma.cuh) ------------------------------------------------------------
// Byte offset in the channel-chunk-major probability tile of (tile row, tile column, channel).
MTABENCH_HD inline int chunked_offset(const FusedParams& p, int row, int col, int c) {
  return (c >> 3) * p.cstride + (row * p.PW + col) * 16 + (c & 7) * 2;
}
// The wgmma A descriptor's start for output row rho's m64 tile (columns j0 .. j0 + 63) at k-step
// s, from the tile's start: wgmma_row_offset(rho) + wgmma_koff(s), i.e. window row rho + u, tile
// column col0 + v, the k-step's first channel chunk.
MTABENCH_HD inline int wgmma_row_offset(const FusedParams& p, int rho) { return (rho * p.PW + p.col0) * 16; }
MTABENCH_HD inline int wgmma_koff(const FusedParams& p, int s) {
  const KIndex x = split_k(p, s * 16);
  return chunked_offset(p, x.u, x.v, x.c);
}
// The kernel walks the k-steps as s = (u K + v) G2 + gp (G2 = Cp / 16 chunk pairs per tap) and
// adds this offset for (u, v, gp) to the row's; equal to wgmma_koff(s) (checked by the plan test).
MTABENCH_HD inline int wgmma_tap_offset(const FusedParams& p, int u, int v, int gp) {
  return chunked_offset(p, u, v, 16 * gp);
}
// The register-A path (conv_item_wgmma_rs): the byte offset of the row this lane gives
// ldmatrix.x4 for the A fragment of warp w (positions 16 w .. 16 w + 15 of the m64 tile) at tile
// row rho, window column v, chunk pair gp. Matrix i = lane / 8 is register i of the fragment:
// positions + 8 (i & 1), the pair's chunk i >> 1 -- the wgmma A register layout, mma.sync's.
MTABENCH_HD inline int wgmma_rs_a_offset(const FusedParams& p, int rho, int v, int gp, int w, int lane) {
  return chunked_offset(p, rho, p.col0 + v + 16 * w + (lane & 15), 16 * gp + 8 * (lane >> 4));
}
// The descriptors' byte offsets (PTX ISA, K-major, no swizzle: SBO from 8 rows to the next 8, LBO
// from the first 8 k to the next 8): A's rows are positions 16 bytes apart, its second 8 k the
// next channel chunk; B's rows are heads, its second 8 k NT core matrices on.
MTABENCH_HD inline int wgmma_a_lbo(const FusedParams& p) { return p.cstride; }
MTABENCH_HD inline int wgmma_b_lbo(const FusedParams& p) { return p.NT * 128; }
constexpr int kWgmmaSbo = 128;
MTABENCH_HD inline int wgmma_b_start(const FusedParams& p, int s) { return s * p.NT * 256; }
// Byte offset of B element (k index k of k-step s, head n) in the weights' core matrices.
MTABENCH_HD inline int wgmma_b_offset(const FusedParams& p, int s, int k, int n) {
  return ((((s * 2 + (k >> 3)) * p.NT + (n >> 3)) * 8 + (n & 7)) * 8 + (k & 7)) * 2;
}

}  // namespace mtabench::fused
