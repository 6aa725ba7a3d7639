#pragma once
// The fused kernel's tensor-core contraction: mma.sync m16n8k16, the contraction index and
// weight fragments, and the two conv items (column interleave for 1-4 heads out, ldmatrix).
#include "impls/fused/fused_contraction.h"
#include "impls/fused/fused_stats.cuh"
#include "impls/fused/fused_tiles.cuh"

#include <type_traits>

namespace mtabench::fused {

// ---- tensor cores ----------------------------------------------------------------------------
template <class T>
__device__ __forceinline__ void mma16816(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1);
template <>
__device__ __forceinline__ void mma16816<__nv_bfloat16>(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
template <>
__device__ __forceinline__ void mma16816<__half>(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ void ldmatrix_x4(unsigned (&a)[4], unsigned addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3])
               : "r"(addr));
}

// Weight element of the contraction: B[kk][n] = weight[o][c][u][v - h] for n = (o, h), 0 in
// the padding and outside the k x k kernel.
template <class T>
__device__ __forceinline__ unsigned weight_bits(const FusedParams& p, int kk, int n) {
  const KIndex x = split_k(p, kk);
  const int o = n / p.H, vk = x.v - (n - o * p.H);
  if (x.pad || x.c >= p.C || o >= p.O || vk < 0 || vk >= p.K) return 0u;
  const T* w = static_cast<const T*>(p.weight);
  return bits16(w[((static_cast<long long>(o) * p.C + x.c) * p.K + x.u) * p.K + vk]);
}
// The B fragment of m16n8k16 for k-step s, n-tile nt, this lane: rows 2t, 2t+1 and 2t+8, 2t+9
// of the 16-row slice, column g.
template <class T>
__device__ __forceinline__ uint2 weight_fragment(const FusedParams& p, int s, int nt, int lane) {
  const int g = lane >> 2, t = lane & 3;
  const int n = nt * 8 + g, k0 = s * 16 + 2 * t;
  uint2 f;
  f.x = weight_bits<T>(p, k0, n) | (weight_bits<T>(p, k0 + 1, n) << 16);
  f.y = weight_bits<T>(p, k0 + 8, n) | (weight_bits<T>(p, k0 + 9, n) << 16);
  return f;
}

// ---- block set-up ------------------------------------------------------------------------------
// Weight fragments of k-steps [s0, s1) into shared memory: [s - s0][n-tile][lane] -> uint2.
template <class T, int NTHR = kThreads>
__device__ void load_weight_fragments(const FusedParams& p, uint2* wf, int s0, int s1) {
  #pragma unroll 1
  for (int e = threadIdx.x; e < (s1 - s0) * p.NT * 32; e += NTHR) {
    const int lane = e & 31, snt = e >> 5;
    wf[e] = weight_fragment<T>(p, s0 + snt / p.NT, snt % p.NT, lane);
  }
}

template <int MW, int NT>
__device__ __forceinline__ void zero_acc(float (&acc)[MW][NT][4]) {
#pragma unroll
  for (int mt = 0; mt < MW; ++mt)
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
      for (int x = 0; x < 4; ++x) acc[mt][nt][x] = 0.f;
}

// When the weights stream through shared memory (kchunk < ksteps), the fragments of k-steps
// [kc, kend) replace the previous chunk's; otherwise all were loaded at block set-up.
template <class T, int NTHR = kThreads>
__device__ __forceinline__ void stream_weights(const FusedParams& p, uint2* wf, int kc, int kend) {
  if (p.kchunk < p.ksteps) {
    __syncthreads();
    load_weight_fragments<T, NTHR>(p, wf, kc, kend);
    __syncthreads();
  }
}

// ---- conv item, tensor-core path for 1-4 heads out ---------------------------------------------
// The tile's R x TJ positions times the heads, contracted over the window on mma.m16n8k16 with
// the column interleave (H = 8 / heads rounded up > 1: an n-tile's 8 columns are (head, column
// offset)): A is the probability tile read in place (im2col by address offsets), B the weight
// fragments. An m-tile is 16 rows of A: 16 positions H columns apart (row g: column H*g); it
// covers 16*H columns of one output row, and a warp owns MW = 2 * TJ / (16 H) m-tiles (both
// halves of two output rows), a compile-time count (v7: the run-time bound cost a compare and a
// branch per m-tile and k-step).
// A fragments: four-channel tiles (fill4) by one ldmatrix.x4 per m-tile and k-step from
// 16-byte chunks (v7; v2-v6 took four 32-bit loads and eight address instructions); other
// tiles by 32-bit loads of channel pairs.
// ROWS: output rows of the warp this call covers, 2 (both) or 1 (row 2 warp + row0 alone: v23,
// half the accumulators live at a time).
template <class T, int MW, int ROWS, int NTHR>
__device__ __forceinline__ void mma_mtiles(const FusedParams& p, char* smem, float (&acc)[MW][1][4], int row0 = 0) {
  constexpr int CT = MW / ROWS;  // m-tiles per output row
  const unsigned* pw = reinterpret_cast<const unsigned*>(smem + p.sm_p);
  const uint2* wf = reinterpret_cast<const uint2*>(smem + p.sm_w);
  const int* koff = reinterpret_cast<const int*>(smem + p.sm_koff);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const int span = 16 * p.H;
  zero_acc(acc);
  if (p.fill4) {
    // This lane's ldmatrix row: A row lane & 15 of the m-tile, chunk lane >> 4 of the k-step.
    const unsigned tile_addr = static_cast<unsigned>(__cvta_generic_to_shared(pw));
    const int half = lane >> 4;
    // m-tile mt's row address: abase + (mt / CT) row_b + (mt % CT) col_b (three registers, not
    // MW: the 64-register instance).
    const unsigned abase = tile_addr + fill4_a_row(p, 2 * warp + row0, lane & 15) * 8;
    const unsigned row_b = p.PW * 8, col_b = span * 8;
    for (int kc = 0; kc < ((kAblate & kAblateContraction) ? 0 : p.ksteps); kc += p.kchunk) {
      const int kend = min(kc + p.kchunk, p.ksteps);
      stream_weights<T, NTHR>(p, reinterpret_cast<uint2*>(smem + p.sm_w), kc, kend);
#pragma unroll 1
      for (int s = kc; s < kend; ++s) {
        const unsigned off = static_cast<unsigned>(koff[s * 2 + half]);
        const uint2 bf = wf[(s - kc) * 32 + lane];
#pragma unroll
        for (int mt = 0; mt < MW; ++mt) {
          unsigned a[4];
          ldmatrix_x4(a, abase + off + (mt / CT) * row_b + (mt % CT) * col_b);
          mma16816<T>(acc[mt][0], a, bf.x, bf.y);
        }
      }
    }
    return;
  }
  // A-fragment word address of m-tile mt, row g.
  auto base_of = [&](int mt) {
    return ((2 * warp + row0 + mt / CT) * p.PW + p.col0 + (mt % CT) * span + p.H * g) * p.pitch_w;
  };
  for (int kc = 0; kc < p.ksteps; kc += p.kchunk) {
    const int kend = min(kc + p.kchunk, p.ksteps);
    stream_weights<T, NTHR>(p, reinterpret_cast<uint2*>(smem + p.sm_w), kc, kend);
#pragma unroll 1
    for (int s = kc; s < kend; ++s) {
      const int off0 = koff[s * 8 + t * 2], off1 = koff[s * 8 + t * 2 + 1];
      const uint2 bf = wf[(s - kc) * 32 + lane];
#pragma unroll
      for (int mt = 0; mt < MW; ++mt) {
        const int b0 = base_of(mt), b1 = b0 + 8 * p.H * p.pitch_w;
        const unsigned a[4] = {pw[b0 + off0], pw[b1 + off0], pw[b0 + off1], pw[b1 + off1]};
        mma16816<T>(acc[mt][0], a, bf.x, bf.y);
      }
    }
  }
}

// Accumulators to the staging tile [head][row][column], bias added, zeros above the diagonal
// (FULL: the tile lies wholly on or below it, no test per value). Accumulator x is
// D[A row g + 8*(x>>1)][n = 2t + (x&1)], n = (head o, column offset h): x, x+1 are adjacent
// columns of one head. dj = j0 - i0 (an int: |j - i| < seq).
template <class T, int MW, bool FULL, int ROWS = 2>
__device__ __forceinline__ void store_mtiles(const FusedParams& p, char* smem, const float (&acc)[MW][1][4], int dj,
                                             int row0 = 0) {
  constexpr int CT = MW / ROWS;
  T* ys = reinterpret_cast<T*>(smem + p.sm_y);
  const float* bias_s = reinterpret_cast<const float*>(smem + p.sm_bias);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const int yp = p.TJ + 8, span = 16 * p.H;
  const int o_t = (2 * t) / p.H, h_t = 2 * t - o_t * p.H;  // this thread's head, column offset
  if (o_t >= p.O) return;                                 // a padding head
  const float bo = bias_s[o_t];
  T* yo = ys + o_t * p.yhp + h_t;
#pragma unroll
  for (int mt = 0; mt < MW; ++mt) {
    const int rho = 2 * warp + row0 + mt / CT, col = (mt % CT) * span + p.H * g;  // A row g
    const int d = dj + col + h_t - rho;  // j - i of accumulator 0
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int dc = half * 8 * p.H;  // A row g + 8
      float lo = acc[mt][0][2 * half] + bo, hi = acc[mt][0][2 * half + 1] + bo;
      if constexpr (!FULL) {
        lo = d + dc <= 0 ? lo : 0.f;
        hi = d + dc + 1 <= 0 ? hi : 0.f;
      }
      *reinterpret_cast<unsigned*>(yo + rho * yp + col + dc) = bits16(from_f<T>(lo)) | (bits16(from_f<T>(hi)) << 16);
    }
  }
}

// ROWS = 1 (v23): the warp's two output rows one after the other, each with its own MW
// m-tiles' accumulators, so half as many are live (the 64-register instance: 16 registers for
// ldmatrix fragments in flight instead of spills; the B fragments are read twice).
template <class T, int MW, int ROWS, int NTHR>
__device__ __forceinline__ void conv_mtiles(const FusedParams& p, char* smem, long long i0, long long j0) {
  const int dj = static_cast<int>(j0 - i0);
#pragma unroll 1
  for (int row0 = 0; row0 < 3 - ROWS; ++row0) {
    float acc[MW][1][4];
    mma_mtiles<T, MW, ROWS, NTHR>(p, smem, acc, row0);
    if (dj + p.TJ - 1 <= 0) store_mtiles<T, MW, true, ROWS>(p, smem, acc, dj, row0);
    else store_mtiles<T, MW, false, ROWS>(p, smem, acc, dj, row0);
  }
}

// NTHR: the block (kFewThreads since v72, over R = kFewRows rows).
template <class T, int NTHR>
__device__ void conv_item_mma(const FusedParams& p, char* smem, int b, int q, int tile) {
  const long long i0 = static_cast<long long>(q) * p.R, j0 = static_cast<long long>(tile) * p.TJ;
  T* ptile = reinterpret_cast<T*>(smem + p.sm_p);
  const float2* st = reinterpret_cast<const float2*>(smem + p.sm_stats);
  if (p.fill4) {
    tile_stats<T, 4, NTHR>(p, smem, b, i0);  // max + log2 sum per row, four channels
    timeline_mark(kTlStats);
    Fill4Task first;  // loaded after the statistics (v10ab; loading it before them, v10c, was slower)
    fill4_load<T>(p, b, i0, j0, threadIdx.x, first);
    const unsigned stage = static_cast<unsigned>(__cvta_generic_to_shared(smem + p.sm_y));  // free until the stores
    fill4_stage_copy<T, NTHR>(p, b, i0, j0, stage);
    fill_probabilities4<T, NTHR>(p, reinterpret_cast<const float4*>(st), reinterpret_cast<unsigned*>(ptile), b, i0, j0, first,
                           stage);
  } else {
    tile_stats<T, 0, NTHR>(p, smem, b, i0);
    const int pitch_h = 2 * p.pitch_w;
    fill_probabilities<T, NTHR>(p, st, ptile, b, i0, j0, 0, p.Cp, p.PW * pitch_h, pitch_h, 1);
  }
  __syncthreads();
  timeline_mark(kTlFill);
  // R = NTHR / 16 rows over NTHR / 32 warps: each warp two rows of TJ / (16 H) m-tiles (a power
  // of two, 1-4). (v72: a second pass for bands of kRows rows with 128 threads cost the
  // 64-register instance 12-300 bytes of spills, however written; the plan gives k 11 with 1-4
  // heads out, whose halo needs 16-row bands, to the ldmatrix path instead.)
  switch (p.TJ / (16 * p.H)) {
    case 4: conv_mtiles<T, 4, 1, NTHR>(p, smem, i0, j0); break;  // v23: a row at a time
    case 2: conv_mtiles<T, 4, 2, NTHR>(p, smem, i0, j0); break;
    default: conv_mtiles<T, 2, 2, NTHR>(p, smem, i0, j0); break;
  }
  __syncthreads();
  timeline_mark(kTlMma);
  store_staging<T, NTHR>(p, reinterpret_cast<const T*>(smem + p.sm_y), b, i0, j0);
  __syncthreads();  // the staging tile and the probability tile are reused by the next item
}

// ---- conv item, ldmatrix path (heads_out > 4) -------------------------------------------------
// The tile's R x TJ positions times NT*8 heads, contracted over the K*K taps x Cp channels in
// chunks of 8 channels. The probability tile is channel-last with a column pitch of an odd
// number of 16-byte units; an A fragment (16 positions x two chunks) is one ldmatrix.x4 whose
// lanes point at (position, chunk): lanes 0-7 and 8-15 positions 0-7 and 8-15 of the first
// chunk, lanes 16-31 the same of the second. im2col is the chunk's byte offset (u*PW + v)
// columns away. B fragments are precomputed in shared memory (one 8-byte load per n-tile).
// A warp owns MW m-tiles (16 consecutive columns of one row each) x NT n-tiles.
// The channel-last tiles' statistics and fill, ldmatrix path and (CHUNKED) wgmma path: by
// eight-channel tasks for seq a multiple of 8 (v24), else by fill_channels.
template <class T, bool CHUNKED>
__device__ __forceinline__ void fill_channel_tile(const FusedParams& p, char* smem, int b, long long i0, long long j0) {
  if (p.S % 8 == 0) {
    tile_stats<T, -1>(p, smem, b, i0);  // K 1: K 2 measured +0.7..+1.0% at k 5 heads 16 (v44, v46)
    fill8<T>(p, reinterpret_cast<const float*>(smem + p.sm_stats), smem + p.sm_p, b, i0, j0);
  } else {
    tile_stats<T>(p, smem, b, i0);
    fill_channels<T, CHUNKED>(p, reinterpret_cast<const float2*>(smem + p.sm_stats),
                              reinterpret_cast<T*>(smem + p.sm_p), b, i0, j0);
  }
}

// PASSES (v130): 1, or 2 for the wide tile at two blocks an SM: each warp's MW m-tiles in two
// passes of MW / 2 (fill once, contract and stage half the m-tiles, then the other half), the
// staging tile in a space of its own (the plan's ldsm_passes 2), since the second pass still
// reads the probability tile.
template <class T, int NT, int MW, int PASSES = 1>
__device__ void conv_item_ldsm(const FusedParams& p, char* smem, int b, int q, int tile) {
  static_assert(MW % PASSES == 0, "whole passes");
  constexpr int PMW = MW / PASSES;  // m-tiles a warp a pass
  const long long i0 = static_cast<long long>(q) * p.R, j0 = static_cast<long long>(tile) * p.TJ;
  fill_channel_tile<T, false>(p, smem, b, i0, j0);
  __syncthreads();

  const uint2* wf = reinterpret_cast<const uint2*>(smem + p.sm_w);
  const int* koff = reinterpret_cast<const int*>(smem + p.sm_koff);
  const float* bias_s = reinterpret_cast<const float*>(smem + p.sm_bias);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  // The caller picks MW = TJ / 8, so every warp owns exactly MW m-tiles: the loops below have no
  // run-time bounds, and a k-step's ldmatrix loads all issue before its mma (v4 first had a
  // per-m-tile bound check: each load waited on the branch before it, each mma on its load).
  const int col_tiles = p.TJ >> 4;
  const int ct_shift = __ffs(col_tiles) - 1;
  // This lane's ldmatrix row: position (lane & 15) of the m-tile, chunk lane >> 4 of the k-step.
  const unsigned tile_addr = static_cast<unsigned>(__cvta_generic_to_shared(smem + p.sm_p));
  const int cpitch = p.pitch_w * 4, half = lane >> 4;
  T* ys = reinterpret_cast<T*>(smem + p.sm_y);
#pragma unroll 1
  for (int pass = 0; pass < PASSES; ++pass) {
    const int m0 = warp * MW + pass * PMW;
    unsigned abase[PMW];
#pragma unroll
    for (int mt = 0; mt < PMW; ++mt) {
      const int m = m0 + mt;
      abase[mt] = tile_addr + ((m >> ct_shift) * p.PW + p.col0 + ((m & (col_tiles - 1)) << 4) + (lane & 15)) * cpitch;
    }
    float acc[PMW][NT][4];
    {
      // v125: the accumulators start at their heads' biases (x of n-tile nt: head nt * 8 + 2 t +
      // (x & 1); heads past O, never stored, at 0), so the staging below adds nothing (v118's
      // bias_acc for the register-A contraction).
      float bias_r[NT][2];
#pragma unroll
      for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int n = nt * 8 + 2 * t + h;
          bias_r[nt][h] = n < p.O ? bias_s[n] : 0.f;
        }
#pragma unroll
      for (int mt = 0; mt < PMW; ++mt)
#pragma unroll
        for (int nt = 0; nt < NT; ++nt)
#pragma unroll
          for (int x = 0; x < 4; ++x) acc[mt][nt][x] = bias_r[nt][x & 1];
    }
    for (int kc = 0; kc < p.ksteps; kc += p.kchunk) {
      const int kend = min(kc + p.kchunk, p.ksteps);
      stream_weights<T>(p, reinterpret_cast<uint2*>(smem + p.sm_w), kc, kend);
      // Fragments of k-step s + 1 are loaded before the mma of k-step s (two register sets, the
      // loop unrolled by two by hand), so no mma waits on the ldmatrix just before it (v4: the
      // profile's largest stall reasons in this loop were 'wait' and 'short scoreboard').
      unsigned a0[PMW][4], a1[PMW][4];
      uint2 b0[NT], b1[NT];
      auto load_step = [&](int s, unsigned (&a)[PMW][4], uint2 (&bf)[NT]) {
        const unsigned off = static_cast<unsigned>(koff[s * 2 + half]);
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) bf[nt] = wf[((s - kc) * NT + nt) * 32 + lane];
#pragma unroll
        for (int mt = 0; mt < PMW; ++mt) ldmatrix_x4(a[mt], abase[mt] + off);
      };
      auto mma_step = [&](const unsigned (&a)[PMW][4], const uint2 (&bf)[NT]) {
#pragma unroll
        for (int mt = 0; mt < PMW; ++mt)
#pragma unroll
          for (int nt = 0; nt < NT; ++nt) mma16816<T>(acc[mt][nt], a[mt], bf[nt].x, bf[nt].y);
      };
      load_step(kc, a0, b0);
#pragma unroll 1
      for (int s = kc; s < kend; s += 2) {
        if (s + 1 < kend) load_step(s + 1, a1, b1);
        mma_step(a0, b0);
        if (s + 1 >= kend) break;
        if (s + 2 < kend) load_step(s + 2, a0, b0);
        mma_step(a1, b1);
      }
    }
    // Accumulator x of n-tile nt is (position g + 8*(x>>1), head nt*8 + 2t + (x&1)) to the
    // staging tile [head][row][column]; in one pass it overlays the probability tile: wait for
    // every warp.
    if constexpr (PASSES == 1) __syncthreads();
    const int yp = p.TJ + 8;
    // v125: a tile wholly at or below the diagonal (its last column j0 + TJ - 1 <= i0, its first
    // row) keeps every position: a copy of the loop without the keep test (v118's lambda).
    const auto stage = [&](auto all_kept) {
#pragma unroll
      for (int mt = 0; mt < PMW; ++mt) {
        const int m = m0 + mt, rho = m >> ct_shift, col = ((m & (col_tiles - 1)) << 4) + g;
        const long long jrel = j0 + col - (i0 + rho);  // j - i of position g
        T* row = ys + rho * yp + col;
#pragma unroll
        for (int hr = 0; hr < 2; ++hr) {
          const bool keep = decltype(all_kept)::value || jrel + 8 * hr <= 0;
#pragma unroll
          for (int nt = 0; nt < NT; ++nt) {
            const int n = nt * 8 + 2 * t;
            if (n < p.O) row[n * p.yhp + 8 * hr] = from_f<T>(keep ? acc[mt][nt][2 * hr] : 0.f);
            if (n + 1 < p.O) row[(n + 1) * p.yhp + 8 * hr] = from_f<T>(keep ? acc[mt][nt][2 * hr + 1] : 0.f);
          }
        }
      }
    };
    if (j0 + p.TJ - 1 <= i0)
      stage(std::true_type{});
    else
      stage(std::false_type{});
  }
  __syncthreads();
  store_staging<T>(p, ys, b, i0, j0);
  __syncthreads();  // the staging tile and the probability tile are reused by the next item
}

}  // namespace mtabench::fused
