#pragma once
// The fused kernel's row path (v163): seq <= 32, k 3, heads_in <= 4, heads_out <= 8, where the
// small kernel's plan (fused_small.cuh) gives one output row a block anyway. One warp a block
// takes one output row (batch b, row i), lane j its column j:
//   1. the weights' and bias's loads, then the C x 3 score rows the row needs (rows i-1..i+1 of
//      every channel; a row is loaded by three warps, the later ones from L2), all before any is
//      used;
//   2. each row's maximum and sum by one redux.sync (fp32 sums by shuffles) and the probability
//      in the lane's register;
//   3. the weights staged into the warp's shared memory ([c][u][v][o4], the small kernel's
//      layout), a __syncwarp;
//   4. the taps' columns j-1 and j+1 by one shuffle each a row, the 9 C taps of four heads by
//      FMA, and the stores (zeros above the diagonal).
// Why: at the seed the small kernel's chain after its rows arrive (probabilities into a shared
// tile, a block barrier, the convolution's index math, channel-group shuffles) measured ~1.1 us
// of its ~1.9 us span (JOURNAL.md, v159's timeline). Here that chain is a few hundred dependent
// cycles of one warp, with no block barrier and no shared probability tile.
#include "harness/device_dtype.cuh"
#include "impls/fused/fused_math.cuh"
#include "impls/fused/fused_small.cuh"  // small_mark, fma_heads4
#include "impls/fused/fused_small_params.h"

namespace mtabench::fused {

// An element's bits (row_kernel's load-order dependency).
__device__ __forceinline__ unsigned row_bits(float v) { return __float_as_uint(v); }
template <class T>
__device__ __forceinline__ unsigned row_bits(T v) { return *reinterpret_cast<const unsigned short*>(&v); }

// The rows' reductions by redux.sync (true) or by shuffles (false); see step 2.
constexpr bool kRowRedux = true;

template <class T>
__global__ void __launch_bounds__(kRowThreads) fused_row_kernel(const SmallParams p) {
  extern __shared__ __align__(16) char smem[];
  float* ws = reinterpret_cast<float*>(smem + p.sm_w);
  float* bias_s = reinterpret_cast<float*>(smem + p.sm_bias);
  const int b = small_div(blockIdx.x, p.qb_magic), i = blockIdx.x - b * p.S;  // QB = S (one row a block)
  const int lane = threadIdx.x;
  const T* scores = static_cast<const T*>(p.scores);
  const T* w = static_cast<const T*>(p.weight);
  const T* bias = static_cast<const T*>(p.bias);
  small_mark(p, kStEntry);

  // 1. The weights in their source order (lane + 32 q: one base register, immediate offsets),
  // placed at staging; then the rows. Heads in [O, O4) get no weights and no bias: their sums are
  // never stored. Channel c, tap row u is row rc = i - 1 + u clamped into the tensor (a row outside
  // is masked after), column min(j, rc) (past the diagonal it re-reads the row's last causal
  // one): 32-bit offsets from the batch's base, so no load waits for another's conversion or a
  // 64-bit address chain.
  const int n_src = p.O * p.C * 9;
  T wr[kRowWeightRegs];
#pragma unroll
  for (int q = 0; q < kRowWeightRegs; ++q) wr[q] = lane + 32 * q < n_src ? w[lane + 32 * q] : T{};
  const T br = lane < p.O ? bias[lane] : T{};
  const int plane = p.S * p.S;  // <= 1024: the offsets below are 32-bit
  const T* base = scores + static_cast<long long>(b) * (p.C * plane);
  T raw[kRowMaxC][3];
  bool ok[kRowMaxC][3];
#pragma unroll
  for (int u = 0; u < 3; ++u) {
    const int row = i - 1 + u, rc = min(max(row, 0), p.S - 1), roff = rc * p.S + min(lane, rc);
#pragma unroll
    for (int c = 0; c < kRowMaxC; ++c) {
      ok[c][u] = c < p.C && row >= 0 && row < p.S;
      raw[c][u] = base[static_cast<unsigned>(min(c, p.C - 1) * plane + roff)];
    }
  }

  // Every load before any reduction: ptxas put the later rows' loads (and the weights') after
  // the first rows' redux.sync, each row's DRAM round trip after the one before (the SASS;
  // ld.volatile and __syncwarp did not stop it). So the rows' values carry a zero that depends
  // on every loaded element (their bits OR'ed, masked by S >> 6, 0 here), which ptxas cannot
  // fold: the first reduction waits for the last load, and the loads go out together.
  unsigned all = 0;
#pragma unroll
  for (int q = 0; q < kRowWeightRegs; ++q) all |= row_bits(wr[q]);
  all |= row_bits(br);
#pragma unroll
  for (int c = 0; c < kRowMaxC; ++c)
#pragma unroll
    for (int u = 0; u < 3; ++u) all |= row_bits(raw[c][u]);
  const float zero = __uint_as_float(all & static_cast<unsigned>(p.S >> 6));

  // 2. Probabilities: all rows' maxima, then their exponentials and sums, side by side.
  float x[kRowMaxC][3], l[kRowMaxC][3];
#pragma unroll
  for (int c = 0; c < kRowMaxC; ++c)
#pragma unroll
    for (int u = 0; u < 3; ++u)
      x[c][u] = ok[c][u] && lane <= i - 1 + u ? fmaf(to_f(raw[c][u]), kLog2e, zero) : -INFINITY;
  small_mark(p, kStLoads, x[0][1]);
  // Each row's maximum and sum: by redux.sync (kRowRedux; the sum in fixed point for 16-bit
  // types, fused_small_params.h) or by five shuffle rounds, every round for all rows.
  float m[kRowMaxC][3];
#pragma unroll
  for (int c = 0; c < kRowMaxC; ++c)
#pragma unroll
    for (int u = 0; u < 3; ++u) m[c][u] = kRowRedux ? warp_max_redux(x[c][u]) : x[c][u];
  if constexpr (!kRowRedux) {
#pragma unroll
    for (int o = 16; o; o /= 2)
#pragma unroll
      for (int c = 0; c < kRowMaxC; ++c)
#pragma unroll
        for (int u = 0; u < 3; ++u) m[c][u] = fmaxf(m[c][u], __shfl_xor_sync(0xffffffffu, m[c][u], o));
  }
#pragma unroll
  for (int c = 0; c < kRowMaxC; ++c)
#pragma unroll
    for (int u = 0; u < 3; ++u) {
      x[c][u] = ok[c][u] ? ex2(x[c][u] - m[c][u]) : 0.f;  // 2^-inf = 0 past the diagonal
      l[c][u] = kRowRedux && sizeof(T) == 2 ? warp_sum_unit_redux<1>(x[c][u]) : x[c][u];
    }
  if constexpr (!(kRowRedux && sizeof(T) == 2)) {
#pragma unroll
    for (int o = 16; o; o /= 2)
#pragma unroll
      for (int c = 0; c < kRowMaxC; ++c)
#pragma unroll
        for (int u = 0; u < 3; ++u) l[c][u] += __shfl_xor_sync(0xffffffffu, l[c][u], o);
  }
#pragma unroll
  for (int c = 0; c < kRowMaxC; ++c)
#pragma unroll
    for (int u = 0; u < 3; ++u) x[c][u] = ok[c][u] ? x[c][u] * rcp_approx(l[c][u]) : 0.f;  // l >= 1 there
  small_mark(p, kStProbs, x[0][1]);

  // 3. The weights into the warp's shared memory: source element e = o (9 C) + rem goes to
  // ws[rem O4 + o].
#pragma unroll
  for (int q = 0; q < kRowWeightRegs; ++q) {
    const int e = lane + 32 * q, o = small_div(e, p.ckk_magic);
    if (e < n_src) ws[(e - o * 9 * p.C) * p.O4 + o] = to_f(wr[q]);
  }
  if (lane < p.O) bias_s[lane] = to_f(br);
  small_mark(p, kStWeights, ws[0] + bias_s[0]);
  __syncwarp();
  small_mark(p, kStBarrier);

  // 4. Tap v of row (c, u) at column j is that row's probability at column j - 1 + v: lane j's
  // neighbours' (zero past the row's ends: a column past the diagonal already holds 0).
  float tap[kRowMaxC][3][3];
#pragma unroll
  for (int c = 0; c < kRowMaxC; ++c)
#pragma unroll
    for (int u = 0; u < 3; ++u) {
      const float left = __shfl_up_sync(0xffffffffu, x[c][u], 1), right = __shfl_down_sync(0xffffffffu, x[c][u], 1);
      tap[c][u][0] = lane > 0 ? left : 0.f;
      tap[c][u][1] = x[c][u];
      tap[c][u][2] = lane < 31 ? right : 0.f;
    }
  T* yp = static_cast<T*>(p.y) + static_cast<long long>(b) * (p.O * plane) + (i * p.S + lane);
  const float4* w4 = reinterpret_cast<const float4*>(ws);
  const int groups = p.O4 / 4;
#pragma unroll 1
  for (int og = 0; og < groups; ++og) {
    float acc[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
    for (int c = 0; c < kRowMaxC; ++c) {
      if (c >= p.C) break;  // its weights are not staged
#pragma unroll
      for (int u = 0; u < 3; ++u)
#pragma unroll
        for (int v = 0; v < 3; ++v) fma_heads4(acc, w4[((c * 3 + u) * 3 + v) * groups + og], tap[c][u][v]);
    }
    if (og == 0) small_mark(p, kStConv, acc[0]);
    if (lane < p.S) {
#pragma unroll
      for (int oo = 0; oo < 4; ++oo) {
        const int o = 4 * og + oo;
        if (o < p.O) yp[static_cast<unsigned>(o * plane)] = from_f<T>(lane <= i ? acc[oo] + bias_s[o] : 0.f);
      }
    }
  }
  small_mark(p, kStExit);
}

}  // namespace mtabench::fused
