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
// chunks) from tile byte fill4_tile_byte. A warp's 16-byte stores are served a quarter-warp (8
// lanes) at a time, and 8 adjacent tasks are 8 adjacent vectors of a row: 64 bytes apart, so
// with the chunks in order every quarter hits two of the eight 16-byte bank groups (v14: 4-way,
// 20% of the kernel's shared wavefronts at seq 4096; v17b, JOURNAL.md). v18: store x of a task
// writes chunk x ^ fill4_chunk_xor(v), which differs between the four vectors of each parity in
// a quarter: conflict-free but where a quarter wraps to the next row. (v21 made quarters of 4
// rows x 2 vectors instead, conflict-free without the rotation; its loads then read 4 rows per
// quarter-warp and it was 3% slower: JOURNAL.md v21.)
struct Fill4Slot {
  int pr, v;
};
// Tasks are row-major: adjacent lanes read adjacent 16 bytes of a score row (v17's lane pairs
// over rows made the loads gather 16 rows each: +7%).
MTABENCH_HD inline int fill4_vectors(const FusedParams& p) { return p.TJ / 8 + 2; }  // per halo row
MTABENCH_HD inline int fill4_tasks(const FusedParams& p) { return (p.R + 2 * p.r) * fill4_vectors(p); }
// ceil(2^32 / d): q * magic >> 32 = q / d for the few hundred q a tile has (checked by the plan
// test); a multiply-high instead of the ten-instruction integer division (v21b).
// 32-bit arithmetic (floor((2^32 - 1) / d) + 1, the same value): the fp32 fill computes it in the
// kernel, where a 64-bit division by a run-time d is a call that cost the instance its registers.
MTABENCH_HD inline unsigned fill4_magic(int d) { return 0xFFFFFFFFu / static_cast<unsigned>(d) + 1u; }
MTABENCH_HD inline Fill4Slot fill4_task(const FusedParams& p, int task) {
  const int pr = static_cast<int>((static_cast<unsigned long long>(static_cast<unsigned>(task)) * p.fill4_magic) >> 32);
  return {pr, task - pr * fill4_vectors(p)};
}
MTABENCH_HD inline int fill4_tile_byte(const FusedParams& p, int pr, int v) { return (pr * p.PW + 8 * v) * 8; }
MTABENCH_HD inline int fill4_chunk_xor(int v) { return (v >> 1) & 3; }

// ---- fp32 tile (fused_fma.cuh) -----------------------------------------------------------------
// v100: tile column t of the fp32 path's probability tile sits at shared column t + fp32_shift(r):
// global column j0 - r + t (j0 a multiple of 128) and its shared column then agree mod 4, so where
// a row starts 16-byte aligned (seq a multiple of 4) its scores copy as 16-byte chunks. The row
// pitch is the shifted row rounded up to whole chunks.
MTABENCH_HD constexpr int fp32_shift(int r) { return (4 - r % 4) % 4; }
MTABENCH_HD constexpr int fp32_row_pitch(int r, int pw) { return (fp32_shift(r) + pw + 3) / 4 * 4; }
MTABENCH_HD inline int fp32_pitch(const FusedParams& p) { return fp32_row_pitch(p.r, p.PW); }

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

// v29: the register-A path's outputs staged in the tile's space for store_staging, in the ldmatrix
// path's layout [head][row][TJ + 8] with the wgmma path's R = 16 and TJ = 64 (compile-time here,
// so a thread's 128 staging stores are immediate offsets from one address), each head's plane 8
// elements past R (TJ + 8) so that the four t lanes of an accumulator store (heads 2t apart, 8
// columns each) hit 4 different 16-byte bank groups. Element offset of (head o, row, column jj).
constexpr int kWgmmaRows = 16, kWgmmaTJ = 64;
// v72: the few-heads tensor-core instance (mma.sync with the column interleave, 1-4 heads out)
// runs blocks of 128 threads over bands of 8 rows (two output rows a warp, as 256 threads do over
// 16), 8 blocks an SM: twice the independent item chains an SM for more halo rows a band (p67's
// probe, JOURNAL.md). The other instances keep 256 threads and 16 rows.
constexpr int kFewThreads = 128, kFewRows = 8;
// v45: the warp-specialised consumers' y staging, after the tile: per consumer warp (8) one
// output row of 32 heads x 16 positions; since v154 a warp group's four warps' space holds one
// whole row of 32 heads x 64 positions (fused_ws.cuh, store_ws_lines).
constexpr int kWsStageWarpBytes = 32 * 16 * 2, kWsStageBytes = 8 * kWsStageWarpBytes;
constexpr int kWgmmaYhp = kWgmmaRows * (kWgmmaTJ + 8) + 8;
MTABENCH_HD constexpr int wgmma_staged_offset(int o, int row, int jj) {
  return o * kWgmmaYhp + row * (kWgmmaTJ + 8) + jj;
}

// ---- four-channel contraction's A addresses (v7; mma_mtiles, setup_block) ---------------------------
// fill4_a_row: the tile offset (in 8-byte columns) where the ldmatrix row of output row rho and
// m-tile row g (output column H g from the m-tile's first) starts: the window row's first tile
// column, col0 - (r & 1) + H g, even, so that its 16-byte chunks hold column pairs.
// fill4_koff: the byte offset of chunk e of the contraction (two a k-step: e = 2 s + half) from
// there (setup_block's table), 0 in the padding (a finite value that meets a zero weight).
MTABENCH_HD inline int fill4_a_row(const FusedParams& p, int rho, int g) { return rho * p.PW + p.col0 - (p.r & 1) + p.H * g; }
MTABENCH_HD inline int fill4_koff(const FusedParams& p, int e) {
  const KIndex x = split_k(p, e * 8);
  return x.pad ? 0 : (x.u * p.PW + x.v + (p.r & 1)) * 8;
}

// ---- eight-channel vector fill (fill8, fused_tiles.cuh; v24) -----------------------------------
// The ldmatrix and wgmma tiles (Cp a multiple of 8) for seq a multiple of 8: task (halo row pr,
// vector v, channel group g) loads one 16-byte vector (8 columns) of each of the group's 8
// channels and writes the 8 columns' 16-byte chunks (8 channels each). Vectors are fastest, so
// the lanes of a quarter-warp read 128 contiguous bytes of one channel's row per load
// (fill_channels, channels fastest, read 32 channel planes per warp load). A task's 8 chunks
// lie one column pitch apart, k 16-byte units (k = 1 on the wgmma path, odd on the ldmatrix
// path), so 8 adjacent vectors' chunks of one column share a bank group. Store y of a task
// writes its column (y + rot) & 7 instead, rot = fill8_rot: lane l of a quarter-warp (l = task
// & 7) then hits bank group (y + l) k mod 8 whatever its row, vector and group, 8 different
// groups per store (k odd, k^2 = 1 mod 8).
struct Fill8Slot {
  int pr, v, g;
};
MTABENCH_HD inline int fill8_tasks(const FusedParams& p) { return (p.R + 2 * p.r) * (p.TJ / 8 + 2) * (p.Cp / 8); }
MTABENCH_HD inline Fill8Slot fill8_task(const FusedParams& p, int task) {
  const int nv = p.TJ / 8 + 2, G = p.Cp / 8, rest = task / nv, pr = rest / G;
  return {pr, task - rest * nv, rest - pr * G};
}
// Byte offset of column col's chunk of channel group g in halo row pr: [c / 8][row][column] x 16
// bytes on the wgmma path (chunked_offset), channel-last with a pitch of pitch_w words on the
// ldmatrix path.
MTABENCH_HD inline int fill8_chunk_byte(const FusedParams& p, int pr, int col, int g) {
  return p.wgmma ? chunked_offset(p, pr, col, 8 * g) : ((pr * p.PW + col) * p.pitch_w + 4 * g) * 4;
}
MTABENCH_HD inline int fill8_col_units(const FusedParams& p) { return p.wgmma ? 1 : p.pitch_w / 4; }
MTABENCH_HD inline int fill8_rot(const FusedParams& p, int task, const Fill8Slot& at) {
  return ((task & 7) - fill8_chunk_byte(p, at.pr, 8 * at.v, at.g) / 16 * fill8_col_units(p)) & 7;
}

}  // namespace mtabench::fused
