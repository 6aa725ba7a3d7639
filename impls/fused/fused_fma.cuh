#pragma once
// The fused kernel's fp32 path: the probability tile contracted by FMA.
#include "impls/fused/fused_stats.cuh"
#include "impls/fused/fused_tiles.cuh"

namespace mtabench::fused {

// ---- probability tile, fp32 path -----------------------------------------------------------------
// The probability tile of this path: float, channel cl's halo rows at pt + cl * halo_rows * pwp,
// row pitch pwp, and TJ = 128 (the plan's only fp32 tile), so of a lane's five columns only the
// last, 128 + lane, can lie past PW. A task is one (row, channel) row of the tile, a warp's lanes
// over its columns. v98 cut the integer work of a task (the row by a multiply-high, int rows and
// columns, one range check a column, -inf for a column not loaded: ex2(-inf - max) = 0, and a
// row without statistics, off the tensor or a padding channel, has (-inf, 0): its max is taken
// as 0, so 0 * 0, not NaN).
// v99: in two passes. v98's fill loaded two tasks' ten values a lane into registers, then waited
// for them: ~4.5 rounds of DRAM round trips an item, and Nsight Compute at fp32 seq 4096 put
// 18.7% of all stall samples on the first use of those loads (long scoreboard). Now
// fill_fp32_issue copies every raw score of the thread's tasks straight into its place in the
// tile (cp.async, 4 bytes, no register held) and stores -inf where nothing is loaded, so all of a
// thread's ~45 loads are in flight at once; fill_fp32_finish waits for this thread's own copies
// and turns its own elements into probabilities in place. A thread transforms only what it
// copied, so no barrier lies between the passes, and the issue pass needs no statistics: the
// caller issues it before waiting for them (tile_stats).
struct Fp32Fill {
  int halo_rows, tasks;
  unsigned magic;  // task / nch = umulhi(task, magic) for every task < 2^32 / nch; nch 1 needs none
  int nch;
  __device__ int row_of(int task) const {
    return nch > 1 ? static_cast<int>(__umulhi(static_cast<unsigned>(task), magic)) : task;
  }
};
__device__ inline Fp32Fill fp32_fill_shape(const FusedParams& p, int nch) {
  const int halo_rows = p.R + 2 * p.r;
  // magic = ceil(2^32 / nch), as fill4's (fused_contraction.h): off by under one part in 2^32 a unit.
  return {halo_rows, halo_rows * nch, nch > 1 ? fill4_magic(nch) : 0u, nch};
}

// Column lane + 32 Q of a task: copied (both addresses as one register and an immediate offset,
// which ptxas did not fold from a computed pointer: four address instructions a copy), or -inf.
template <int Q>
__device__ __forceinline__ void fp32_column(unsigned dst, const float* src, float* drow, bool loaded) {
  if (loaded) asm volatile("cp.async.ca.shared.global [%0+%2], [%1+%2], 4;\n" ::"r"(dst), "l"(src), "n"(128 * Q) : "memory");
  else drow[32 * Q] = -INFINITY;
}

__device__ inline void fill_fp32_issue(const FusedParams& p, float* pt, int b, long long i0, long long j0, int c0, int nch,
                                       int pwp) {
  const Fp32Fill f = fp32_fill_shape(p, nch);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  constexpr int kW = kThreads / 32;
  const int S = static_cast<int>(p.S), ib = static_cast<int>(i0) - p.r, jb = static_cast<int>(j0) - p.r;
  const int lo = max(-jb, 0);  // the first tile column inside the tensor (> 0 only at j0 = 0)
  const long long plane = static_cast<long long>(S) * S;
  const float* batch = static_cast<const float*>(p.scores) + static_cast<long long>(b) * p.C * plane + jb;
  #pragma unroll 1
  for (int task = warp; task < f.tasks; task += kW) {
    const int pr = f.row_of(task), cl = task - pr * nch, c = c0 + cl, ip = ib + pr;
    const bool row_ok = !(kAblate & kAblateFillLoads) && c < p.C && ip >= 0 && ip < S;
    // Tile columns lo .. hi are loaded: in the tensor, on or below the diagonal, in the tile.
    const int hi = row_ok ? min(ip - jb, p.PW - 1) : -1;
    const float* src = (row_ok ? batch + c * plane + static_cast<long long>(ip) * S : batch) + lane;
    float* drow = pt + (cl * f.halo_rows + pr) * pwp + lane;
    const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(drow));
    fp32_column<0>(dst, src, drow, lane >= lo && lane <= hi);
    fp32_column<1>(dst, src, drow, lane + 32 >= lo && lane + 32 <= hi);
    fp32_column<2>(dst, src, drow, lane + 64 >= lo && lane + 64 <= hi);
    fp32_column<3>(dst, src, drow, lane + 96 <= hi);  // lo <= r < 96
    if (lane + 128 < p.PW) fp32_column<4>(dst, src, drow, lane + 128 <= hi);  // columns 0-127 are < PW
  }
}

__device__ inline void fill_fp32_finish(const FusedParams& p, const float2* st, float* pt, int c0, int nch, int pwp) {
  const Fp32Fill f = fp32_fill_shape(p, nch);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  constexpr int kW = kThreads / 32;
  asm volatile("cp.async.wait_all;\n" ::: "memory");
  #pragma unroll 1
  for (int task = warp; task < f.tasks; task += kW) {
    const int pr = f.row_of(task), cl = task - pr * nch, c = c0 + cl;
    const float2 sv = c < p.C ? st[pr * p.C + c] : make_float2(0.f, 0.f);
    const float mx = sv.y > 0.f ? sv.x : 0.f;
    float* drow = pt + (cl * f.halo_rows + pr) * pwp + lane;
    float raw[kColChunks];
#pragma unroll
    for (int q = 0; q < kColChunks; ++q)
      if (q < kColChunks - 1 || lane + 32 * q < p.PW) raw[q] = drow[32 * q];
#pragma unroll
    for (int q = 0; q < kColChunks; ++q)
      if (q < kColChunks - 1 || lane + 32 * q < p.PW) drow[32 * q] = ex2(raw[q] * kLog2e - mx) * sv.y;
  }
}

// ---- conv item, fp32 FMA path --------------------------------------------------------------------
// 256 threads = 16 rows x 16 groups of 8 columns (TJ = 128); each thread accumulates 8 columns x
// 4 heads at a time, over channel groups of CG (one probability tile per group). KT > 0: the
// kernel width at compile time (registers hold the row window).
template <int KT>
__device__ void conv_item_fma(const FusedParams& p, char* smem, int b, int q, int tile) {
  const long long i0 = static_cast<long long>(q) * p.R, j0 = static_cast<long long>(tile) * p.TJ;
  const float2* st = reinterpret_cast<const float2*>(smem + p.sm_stats);
  float* pt = reinterpret_cast<float*>(smem + p.sm_p);
  const int halo_rows = p.R + 2 * p.r, pwp = (p.PW + 3) / 4 * 4;
  const bool one_tile = p.C <= p.CG;
  // v99: the tile's score copies in flight while the statistics are waited for.
  if (one_tile) fill_fp32_issue(p, pt, b, i0, j0, 0, p.C, pwp);
  tile_stats<float>(p, smem, b, i0);
  if (one_tile) {
    fill_fp32_finish(p, st, pt, 0, p.C, pwp);
    __syncthreads();
  }
  // Weights: in shared memory as [head group of 4][c][u][v][4 heads] (setup_block, v94), one
  // 16-byte broadcast load a tap; or, when too many, straight from global memory as [o][c][u][v]
  // (the same address in every thread: a broadcast), only in the KT 0 instance (the plan's
  // choice), so the KT 3/5/7 instances hold one copy of the loop: v93r's one pointer for both
  // made every weight a generic load; v94's two copies in every instance spilled more.
  const float* wg = static_cast<const float*>(p.weight);
  const float4* ws4 = reinterpret_cast<const float4*>(smem + p.sm_w);
  const float* bias_s = reinterpret_cast<const float*>(smem + p.sm_bias);
  const int rho = threadIdx.x >> 4, g0 = (threadIdx.x & 15) * 8;
  const long long i = i0 + rho;
  const int K = KT > 0 ? KT : p.K;
  const int KK = K * K;
  float* y = static_cast<float*>(p.y);
  for (int oc = 0; oc < p.O; oc += 4) {
    float acc[8][4];
#pragma unroll
    for (int x = 0; x < 8; ++x)
#pragma unroll
      for (int oo = 0; oo < 4; ++oo) acc[x][oo] = 0.f;
    // Channel cl of the tile (channel c of the weights), weight_of(c, tap) -> the four heads' weights.
    const auto channel = [&](int cl, int c, const auto& weight_of) {
      if constexpr (KT > 0) {
#pragma unroll
        for (int u = 0; u < KT; ++u) {
          const float* row = pt + (cl * halo_rows + rho + u) * pwp + g0;
          // v96: the window row in 16-byte loads (and an 8-byte tail for odd KT), where v94b made one
          // 4-byte load a value: with 8 columns a thread, 16 threads a row, those loads conflicted
          // 4-way (Nsight Compute at fp32 seq 4096: 56% of the shared wavefronts excess). row is
          // 16-byte aligned: the tile, its pitch pwp (a multiple of 4) and g0 (of 8).
          float win[8 + KT - 1];
#pragma unroll
          for (int x = 0; x + 4 <= 8 + KT - 1; x += 4) {
            const float4 v4 = *reinterpret_cast<const float4*>(row + x);
            win[x] = v4.x, win[x + 1] = v4.y, win[x + 2] = v4.z, win[x + 3] = v4.w;
          }
          if constexpr ((8 + KT - 1) % 4 == 2) {
            const float2 v2 = *reinterpret_cast<const float2*>(row + (8 + KT - 1) / 4 * 4);
            win[8 + KT - 3] = v2.x, win[8 + KT - 2] = v2.y;
          }
          static_assert((8 + KT - 1) % 4 == 0 || (8 + KT - 1) % 4 == 2, "odd KT: whole float4s and a float2");
#pragma unroll
          for (int v = 0; v < KT; ++v) {
            const float4 w4 = weight_of(c, u * KT + v);
            const float wv[4] = {w4.x, w4.y, w4.z, w4.w};
#pragma unroll
            for (int x = 0; x < 8; ++x)
#pragma unroll
              for (int oo = 0; oo < 4; ++oo) acc[x][oo] = fmaf(wv[oo], win[x + v], acc[x][oo]);
          }
        }
      } else {
        for (int u = 0; u < K; ++u) {
          const float* row = pt + (cl * halo_rows + rho + u) * pwp + g0;
          for (int v = 0; v < K; ++v) {
            const float4 w4 = weight_of(c, u * K + v);
            const float wv[4] = {w4.x, w4.y, w4.z, w4.w};
#pragma unroll
            for (int x = 0; x < 8; ++x)
#pragma unroll
              for (int oo = 0; oo < 4; ++oo) acc[x][oo] = fmaf(wv[oo], row[x + v], acc[x][oo]);
          }
        }
      }
    };
    const auto from_shared = [&](int c, int tap) { return ws4[((oc >> 2) * p.C + c) * KK + tap]; };
    const auto from_global = [&](int c, int tap) {
      const float* wc = wg + (oc * p.C + c) * KK + tap;  // weight [oc + oo][c][tap] at wc[oo * C * KK]
      const int step = p.C * KK;
      return make_float4(wc[0], oc + 1 < p.O ? wc[step] : 0.f, oc + 2 < p.O ? wc[2 * step] : 0.f,
                         oc + 3 < p.O ? wc[3 * step] : 0.f);
    };
    for (int cg = 0; cg < p.C; cg += p.CG) {
      if (!one_tile) {
        __syncthreads();
        fill_fp32_issue(p, pt, b, i0, j0, cg, min(p.CG, p.C - cg), pwp);
        fill_fp32_finish(p, st, pt, cg, min(p.CG, p.C - cg), pwp);
        __syncthreads();
      }
      for (int cl = 0; cl < min(p.CG, p.C - cg); ++cl) {
        if constexpr (KT > 0) channel(cl, cg + cl, from_shared);  // the plan gives global weights KT 0
        else if (p.w_global) channel(cl, cg + cl, from_global);
        else channel(cl, cg + cl, from_shared);
      }
    }
    if (i < p.S && !(kAblate & kAblateTileStores)) {
#pragma unroll
      for (int oo = 0; oo < 4; ++oo) {
        const int o = oc + oo;
        if (o >= p.O) break;
        const long long j = j0 + g0;
        float out[8];
#pragma unroll
        for (int x = 0; x < 8; ++x) out[x] = j + x <= i ? acc[x][oo] + bias_s[o] : 0.f;
        float* dst = y + ((static_cast<long long>(b) * p.O + o) * p.S + i) * p.S + j;
        if (j + 8 <= p.S && (reinterpret_cast<std::uintptr_t>(dst) & 15) == 0) {
          store_stream(dst, make_float4(out[0], out[1], out[2], out[3]));
          store_stream(dst + 4, make_float4(out[4], out[5], out[6], out[7]));
        } else {
          for (int x = 0; x < 8 && j + x < p.S; ++x) dst[x] = out[x];
        }
      }
    }
  }
  __syncthreads();
}

}  // namespace mtabench::fused
