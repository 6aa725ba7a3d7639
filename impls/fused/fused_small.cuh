#pragma once
// The fused kernel's small-seq path (seq <= 256, few multiply-adds per position): one block per
// RB output rows of one batch, no work queue, no scratch, a few hundred instructions per warp.
// Why a second kernel: at seq 32 the general kernel spent 28 us in 4 blocks whose warps each ran
// ~7 K dependent instructions (Nsight Compute: 230 K warp instructions, 27% issue-active); here
// 64 blocks each run ~1/20 of that (impls/fused/JOURNAL.md, v3).
//   1. Each warp takes two (channel, row) pairs of the block's rows +- r: loads the causal part
//      of both rows (lanes over columns, all loads issued before any is used), reduces max and
//      sum by shuffles, and writes the probabilities (fp32) into shared memory, with r zero
//      columns on each side and zero rows outside the tensor: the window needs no bounds checks.
//   2. The convolution by fp32 FMA against the weights in shared memory laid out [c][u][v][o]
//      (one 16-byte broadcast load per four heads): a task is one position, four heads and one
//      of G channel groups (v16; before, a thread took a position's every head and channel);
//      a position's G tasks are adjacent lanes whose sums meet by shuffles, and the first adds
//      the bias and stores (zeros above the diagonal).
#include "harness/device_dtype.cuh"
#include "impls/fused/fused_math.cuh"
#include "impls/fused/fused_small_params.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace mtabench::fused {

// Thread 0's stamp of word `w` of its block's timeline row (the diagnostic build only): the time
// once `dep` is available (setp reads it first, so the stamp waits for a load that produces it).
__device__ __forceinline__ void small_mark(const SmallParams& p, int w, float dep = 0.f) {
#if MTABENCH_FUSED_TIMELINE
  if (threadIdx.x != 0 || !p.timeline) return;
  unsigned long long t;
  asm volatile("{\n\t.reg .pred q;\n\tsetp.eq.f32 q, %1, 0f7F7FFFFF;\n\tmov.u64 %0, %%globaltimer;\n\t@q add.u64 %0, %0, 1;\n\t}"
               : "=l"(t) : "f"(dep) : "memory");
  unsigned long long* row = p.timeline + static_cast<long long>(kSmallTimelineWords) * blockIdx.x;
  row[w] = t;
  if (w == kStEntry) {
    unsigned sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    row[kStSm] = sm;
  }
#else
  (void)p;
  (void)w;
  (void)dep;
#endif
}

// One tap of the convolution for four heads: acc[o] += w[o] * p.
__device__ __forceinline__ void fma_heads4(float (&acc)[4], const float4& w, float pv) {
  acc[0] = fmaf(w.x, pv, acc[0]);
  acc[1] = fmaf(w.y, pv, acc[1]);
  acc[2] = fmaf(w.z, pv, acc[2]);
  acc[3] = fmaf(w.w, pv, acc[3]);
}

// KT: the kernel width at compile time (3), or 0 for any. NCOL: columns per lane in the row
// loads (p.NCOL; 32 NCOL >= seq).
template <class T, int KT, int NCOL>
__global__ void __launch_bounds__(kSmallThreads) fused_small_kernel(const SmallParams p) {
  extern __shared__ __align__(16) char smem[];
  float* ws = reinterpret_cast<float*>(smem + p.sm_w);
  float* bias_s = reinterpret_cast<float*>(smem + p.sm_bias);
  float* pt = reinterpret_cast<float*>(smem + p.sm_p);
  const int b = small_div(blockIdx.x, p.qb_magic);
  const int i0 = (blockIdx.x - b * p.QB) * p.RB;
  const int halo = p.RB + 2 * p.r;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const T* scores = static_cast<const T*>(p.scores);
  small_mark(p, kStEntry);

  // v157: the weights' and the bias's loads go out first, one source element a thread held in a
  // register until phase 1 is done, so their DRAM round trip overlaps the rows' (the seed's
  // timeline: staging them after phase 1, from L2 after a prefetch, took 0.6 of the kernel's
  // 2.7 us). v160: where phase 1's pairs leave whole warps idle (the seed: 12 pairs on 6 of 8
  // warps), those warps (the stagers) load and stage the weights instead, while the others compute
  // the probabilities (v159's timeline: staging was 0.19 us of thread 0's path to the barrier).
  // The two roles are two branches: holding the stagers' registers across phase 1 in one path
  // made ptxas run the two rows' reductions one after the other again (v158 had put them side by
  // side). Elements past what the first round of loads covers are prefetched into L2 now.
  const T* w = static_cast<const T*>(p.weight);
  const T* bias = static_cast<const T*>(p.bias);
  const int K = KT > 0 ? KT : p.K;
  const int kk = K * K, n_src = p.O * p.C * kk;  // weight [O][C][K][K] in the workload dtype
  const int pairs = halo * p.C, busy_warps = (pairs + 1) / 2;
  // Stagers only at NCOL <= 2 (seq <= 64): at NCOL 4-8, with their branch in the kernel, ptxas put
  // the first row's conversions between the two rows' loads, so the second row's loads waited for
  // the first's DRAM round trip (the SASS; v160's first build measured seq 128 +10%).
  const int stage0 = NCOL <= 2 && busy_warps < kSmallThreads / 32 ? 32 * busy_warps : 0;  // first stager; 0: none
  const int n_stage = kSmallThreads - stage0;
  constexpr int kWRegs = kSmallWeightBytes / static_cast<int>(sizeof(T));
  constexpr bool kSmallRedux = NCOL <= 2;  // v162: the rows' reductions by redux.sync
  T w_raw{}, b_raw{};
  if (!stage0) {
    if (threadIdx.x < n_src) w_raw = w[threadIdx.x];
    if (threadIdx.x < p.O) b_raw = bias[threadIdx.x];
  }
  {
    // Lines the first loads cover: a round of the stagers' registers, or one element a thread.
    const int first = (stage0 ? kWRegs * n_stage : kSmallThreads) * static_cast<int>(sizeof(T)) / 128;
    const int lines = (n_src * static_cast<int>(sizeof(T)) + 127) / 128;
    for (int e = first + threadIdx.x; e < lines; e += kSmallThreads)
      asm volatile("prefetch.global.L2 [%0];" ::"l"(reinterpret_cast<const char*>(w) + 128 * e));
  }
  // Weights as [c][u][v][o4] and the bias, fp32. Source element e = o (C k^2) + rem with
  // rem = (c K + u) K + v goes to ws[rem O4 + o]; heads o in [O, O4) are zeros.
  // stage_zeros_and_bias(s, n, v): the s-th of n staging threads writes its share of the zero heads
  // and of the bias, bias[s] from its register v.
  const int ckk = p.C * kk, pad = p.O4 - p.O;
  const auto stage_weight = [&](int e, T v) {
    const int o = small_div(e, p.ckk_magic);
    ws[(e - o * ckk) * p.O4 + o] = to_f(v);
  };
  const auto stage_zeros_and_bias = [&](int s, int n, T v) {
    for (int e = s; e < ckk * pad; e += n) {
      const int rem = e / pad;
      ws[rem * p.O4 + p.O + (e - rem * pad)] = 0.f;
    }
    if (s < p.O4) bias_s[s] = s < p.O ? to_f(v) : 0.f;
    for (int o = s + n; o < p.O4; o += n)  // heads_out may pass the stagers (fp32)
      bias_s[o] = o < p.O ? to_f(bias[o]) : 0.f;
  };
  if (stage0 && threadIdx.x >= stage0) {
    const int s = threadIdx.x - stage0;
    if (s < p.O) b_raw = bias[s];
    for (int e0 = s; e0 < n_src; e0 += kWRegs * n_stage) {
      T v[kWRegs];
#pragma unroll
      for (int q = 0; q < kWRegs; ++q) v[q] = e0 + q * n_stage < n_src ? w[e0 + q * n_stage] : T{};
#pragma unroll
      for (int q = 0; q < kWRegs; ++q)
        if (e0 + q * n_stage < n_src) stage_weight(e0 + q * n_stage, v[q]);
    }
    stage_zeros_and_bias(s, n_stage, b_raw);
  } else {
    // 1. Probabilities of rows i0 - r .. i0 + RB + r - 1, all channels; two pairs per warp (the
    // first busy_warps warps).
    for (int pair0 = warp * 2; pair0 < pairs; pair0 += 2 * (kSmallThreads / 32)) {
      float x[2][NCOL];
      int row_of[2];
      if constexpr (NCOL >= 2) {
        // v93r (seq 65-256; 33-256 since v162): every lane loads, and the masks come after: a
        // column past the diagonal re-reads the row's last causal one (a sector the row's loads
        // read anyway), a row outside the tensor (or a pair past the last) the tensor's first
        // element. The predicated loads below kept each conversion between the loads, where it
        // waits for its load (predicated or not), so a pass's 8-16 loads went out in 3-4 batches
        // (tools/load_waits.py; seq 256 -5.9%, JOURNAL.md v93). At NCOL 1-2 (2-4 loads) this form measured +2..+3% (v93s); v162
        // gives NCOL 2 this form again, with both rows' addresses before any load: in the other
        // form ptxas issued the second row's loads after the first row's conversions, one DRAM
        // round trip after the first's (tools/spill-sites.sh's load waits).
        T raw[2][NCOL];  // both rows' loads before any conversion
        const T* row[2];
#pragma unroll
        for (int h = 0; h < 2; ++h) {  // both rows' addresses before any load
          const int pair = pair0 + h, c = small_div(pair, p.halo_magic), pr = pair - c * halo, ip = i0 - p.r + pr;
          row_of[h] = pair < pairs && ip >= 0 && ip < p.S ? ip : -1;
          row[h] = row_of[h] < 0 ? scores
                                 : scores + ((static_cast<long long>(b) * p.C + c) * p.S + ip) * p.S;
        }
#pragma unroll
        for (int h = 0; h < 2; ++h)
#pragma unroll
          for (int q = 0; q < NCOL; ++q) raw[h][q] = row[h][min(lane + 32 * q, max(row_of[h], 0))];
#pragma unroll
        for (int h = 0; h < 2; ++h)
#pragma unroll
          for (int q = 0; q < NCOL; ++q) {
            const int j = lane + 32 * q;
            x[h][q] = row_of[h] >= 0 && j <= row_of[h] ? to_f(raw[h][q]) * kLog2e : -INFINITY;
          }
      } else {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int pair = pair0 + h, c = small_div(pair, p.halo_magic), pr = pair - c * halo, ip = i0 - p.r + pr;
          row_of[h] = pair < pairs && ip >= 0 && ip < p.S ? ip : -1;
          const T* row = scores + ((static_cast<long long>(b) * p.C + c) * p.S + (row_of[h] < 0 ? 0 : ip)) * p.S;
#pragma unroll
          for (int q = 0; q < NCOL; ++q) {
            const int j = lane + 32 * q;
            x[h][q] = row_of[h] >= 0 && j <= row_of[h] ? to_f(row[j]) * kLog2e : -INFINITY;
          }
        }
      }
      if (pair0 == 0) small_mark(p, kStLoads, x[0][0]);
      // v158: the two pairs' reductions side by side, each shuffle round for both rows (before,
      // pair 1's ten shuffles waited for pair 0's: a `break` between them kept them apart), and the
      // reciprocal by rcp.approx (l >= 1: the row's maximum contributes 2^0). A pair past the last
      // has row_of -1: its x are -inf, then 0, and it stores nothing.
      float m[2], l[2];
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        m[h] = x[h][0];
#pragma unroll
        for (int q = 1; q < NCOL; ++q) m[h] = fmaxf(m[h], x[h][q]);
      }
      // v162: at NCOL <= 2, each maximum by one redux.sync (five shuffle rounds before). At
      // NCOL 4 the redux form made ptxas convert the first row's columns between the rows' loads
      // (the SASS: the second row's DRAM round trip after the first's): NCOL 4-8 keep shuffles.
      if constexpr (kSmallRedux) {
#pragma unroll
        for (int h = 0; h < 2; ++h) m[h] = warp_max_redux(m[h]);
      } else {
#pragma unroll
        for (int o = 16; o; o /= 2)
#pragma unroll
          for (int h = 0; h < 2; ++h) m[h] = fmaxf(m[h], __shfl_xor_sync(0xffffffffu, m[h], o));
      }
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        l[h] = 0.f;
#pragma unroll
        for (int q = 0; q < NCOL; ++q) {
          x[h][q] = row_of[h] >= 0 ? ex2(x[h][q] - m[h]) : 0.f;  // 2^-inf = 0 past the diagonal
          l[h] += x[h][q];
        }
      }
      if constexpr (kSmallRedux && sizeof(T) == 2) {  // v162: each sum by one fixed-point redux
#pragma unroll
        for (int h = 0; h < 2; ++h) l[h] = warp_sum_unit_redux<NCOL>(l[h]);
      } else {
#pragma unroll
        for (int o = 16; o; o /= 2)
#pragma unroll
          for (int h = 0; h < 2; ++h) l[h] += __shfl_xor_sync(0xffffffffu, l[h], o);
      }
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int pair = pair0 + h;
        if (pair >= pairs) break;
        const float inv = row_of[h] >= 0 ? rcp_approx(l[h]) : 0.f;
        float* dst = pt + pair * p.SP;  // pair = c * halo + pr: the tile is [c][pr][column + r]
#pragma unroll
        for (int q = 0; q < NCOL; ++q) {
          const int j = lane + 32 * q;
          if (j < p.S) dst[j + p.r] = x[h][q] * inv;
        }
        if (lane < 2 * p.r) dst[lane < p.r ? lane : p.S + lane] = 0.f;  // the zero padding columns
      }
    }
    small_mark(p, kStProbs);
    if (!stage0) {
      if (threadIdx.x < n_src) stage_weight(threadIdx.x, w_raw);
      for (int e = threadIdx.x + kSmallThreads; e < n_src; e += kSmallThreads) stage_weight(e, w[e]);
      stage_zeros_and_bias(threadIdx.x, kSmallThreads, b_raw);
    }
    small_mark(p, kStWeights, stage0 ? 0.f : ws[0] + bias_s[0]);  // thread 0 stages only without stagers
  }  // the phase-1 warps' branch
  __syncthreads();
  small_mark(p, kStBarrier);

  // 2. The convolution. Task t: channel group g = t mod G (lanes next to each other), then the
  // block's position e = (ii, j), then the head group og; every thread runs the same number of
  // rounds, so every lane reaches the shuffles.
  T* y = static_cast<T*>(p.y);
  const long long plane = static_cast<long long>(p.S) * p.S;
  const int G = p.G, lg = __ffs(G) - 1, positions = p.RB * p.S, tasks = positions * (p.O4 / 4) * G;
  #pragma unroll 1
  for (int t0 = 0; t0 < tasks; t0 += kSmallThreads) {
    const int t = t0 + threadIdx.x, g = t & (G - 1), rest = t >> lg;
    const int og = small_div(rest, p.pos_magic), e = rest - og * positions;
    const int ii = small_div(e, p.s_magic), j = e - ii * p.S, i = i0 + ii, oc = 4 * og;
    const bool live = t < tasks && i < p.S;
    float acc[4] = {0.f, 0.f, 0.f, 0.f};
    if (live && j <= i) {
      for (int c = g; c < p.C; c += G) {
        if constexpr (KT > 0) {
          // v158: a channel's K^2 probabilities and weight vectors loaded before its FMAs, so the
          // shared-memory loads overlap (v157's SASS took one register quad for every tap: each
          // tap's LDS.128 waited for the last tap's FMAs, ~30 cycles a tap in series).
          float pv[KT][KT];
          float4 w4[KT][KT];
#pragma unroll
          for (int u = 0; u < KT; ++u) {
            const float* prow = pt + (c * halo + ii + u) * p.SP + j;
            const float4* wv = reinterpret_cast<const float4*>(ws + ((c * KT + u) * KT) * p.O4 + oc);
#pragma unroll
            for (int v = 0; v < KT; ++v) {
              pv[u][v] = prow[v];
              w4[u][v] = wv[v * (p.O4 / 4)];
            }
          }
#pragma unroll
          for (int u = 0; u < KT; ++u)
#pragma unroll
            for (int v = 0; v < KT; ++v) fma_heads4(acc, w4[u][v], pv[u][v]);
        } else {
#pragma unroll
          for (int u = 0; u < K; ++u) {
            const float* prow = pt + (c * halo + ii + u) * p.SP + j;
            const float4* wv = reinterpret_cast<const float4*>(ws + ((c * K + u) * K) * p.O4 + oc);
#pragma unroll
            for (int v = 0; v < K; ++v) {
              fma_heads4(acc, wv[v * (p.O4 / 4)], prow[v]);
            }
          }
        }
      }
    }
    for (int o = G / 2; o > 0; o /= 2)
#pragma unroll
      for (int x = 0; x < 4; ++x) acc[x] += __shfl_xor_sync(0xffffffffu, acc[x], o);
    if (t0 == 0) small_mark(p, kStConv, acc[0]);
    if (live && g == 0) {
      T* yp = y + (static_cast<long long>(b) * p.O * p.S + i) * p.S + j;
#pragma unroll
      for (int oo = 0; oo < 4; ++oo)
        if (oc + oo < p.O) yp[(oc + oo) * plane] = from_f<T>(j <= i ? acc[oo] + bias_s[oc + oo] : 0.f);
    }
  }
  small_mark(p, kStExit);
}

}  // namespace mtabench::fused
