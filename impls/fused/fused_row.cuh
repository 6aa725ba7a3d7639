#pragma once
// The fused kernel's row path (v164-v168): seq <= 128 (32 before v166, 64 before v168), k 3, heads_in <=
// kRowMaxC, heads_out <= kRowMaxO, where the small kernel's plan (fused_small.cuh) gives one
// output row a block anyway. A block takes one output row (batch b, row i), warp c its channel c,
// lane j its columns j + 32 q (q < NCOL):
//   1. the warp's weights (channel c's 9 taps of every head) and its three score rows (rows
//      i-1..i+1 of channel c; a row is loaded by three blocks, the later ones from L2), all
//      issued before any is used;
//   2. each row's maximum and sum by one redux.sync (fp32 sums by shuffles), the probabilities in
//      the lane's registers;
//   3. the weights into the warp's own shared memory ([u][v][o4]) and a __syncwarp;
//   4. the taps' columns j-1 and j+1 by shuffles, channel c's 9 taps of four heads by FMA, the
//      partial sums into shared memory ([head][c][column]);
//   5. a block barrier, then a thread per (head, column) adds the channels' partial sums and the
//      bias and stores (zeros above the diagonal).
// Why: at the seed the small kernel's chain after its rows arrive (probabilities into a shared
// tile, a block barrier, the convolution's index math, channel-group shuffles) measured ~1.1 us
// of its ~1.9 us span (JOURNAL.md, v159's timeline). v163 ran the whole row on one warp (no
// block barrier at all) and lost 17%: one warp's ~900 dependent instructions cost more than the
// barrier saves. Here each warp runs one channel's share, the barrier comes after the FMAs, and
// only C loads and adds a thread follow it.
#include "harness/device_dtype.cuh"
#include "impls/fused/fused_math.cuh"
#include "impls/fused/fused_small.cuh"  // small_mark, fma_heads4
#include "impls/fused/fused_small_params.h"

namespace mtabench::fused {

// An element's bits (the load-order dependency in step 1).
__device__ __forceinline__ unsigned row_bits(float v) { return __float_as_uint(v); }
template <class T>
__device__ __forceinline__ unsigned row_bits(T v) { return *reinterpret_cast<const unsigned short*>(&v); }

// NCOL: columns a lane (p.NCOL: 1 for seq <= 32, 2 for seq 33-64 since v166, 4 for seq 65-128
// since v168), column j = lane + 32 q of the lane's q-th. v167 also took seq 129-256 (NCOL 8) and
// measured the same as the small kernel there (its timeline: a thread's 8 columns of channel sums
// and stores took 1.1 of a block's 3.9 us), so those stay with the small kernel.
template <class T, int NCOL>
__global__ void __launch_bounds__(32 * kRowMaxC) fused_row_kernel(const SmallParams p) {
  constexpr int W = 32 * NCOL;  // columns a warp holds
  extern __shared__ __align__(16) char smem[];
  const int c = threadIdx.x >> 5, lane = threadIdx.x & 31;
  float* ws = reinterpret_cast<float*>(smem + p.sm_w) + c * 9 * p.O4;  // this warp's [u][v][o4]
  float* bias_s = reinterpret_cast<float*>(smem + p.sm_bias);
  float* part = reinterpret_cast<float*>(smem + p.sm_p);  // [head][channel][column < W]
  const int b = small_div(blockIdx.x, p.qb_magic), i = blockIdx.x - b * p.S;  // QB = S (one row a block)
  const T* scores = static_cast<const T*>(p.scores);
  const T* w = static_cast<const T*>(p.weight);
  const T* bias = static_cast<const T*>(p.bias);
  small_mark(p, kStEntry);

  // 1. Element e = o 9 + t (tap t = 3 u + v) of channel c's weights is source element o (9 C) +
  // 9 c + t, staged at ws[t O4 + o]; heads in [O, O4) get no weights and no bias (their sums are
  // never stored). Row u is row i - 1 + u clamped into the tensor (a row outside is masked
  // after), column min(j, row) (past the diagonal it re-reads the row's last causal one).
  const int n_w = 9 * p.O;
  T wr[kRowWeightRegs];
#pragma unroll
  for (int q = 0; q < kRowWeightRegs; ++q) {
    const int e = lane + 32 * q, o = e / 9;
    wr[q] = e < n_w ? w[o * 9 * p.C + 9 * c + (e - 9 * o)] : T{};
  }
  const T br = c == 0 && lane < p.O ? bias[lane] : T{};
  const int plane = p.S * p.S;  // <= 4096: 32-bit offsets from the batch's base
  const T* base = scores + static_cast<long long>(b) * (p.C * plane) + c * plane;
  T raw[3][NCOL];
  bool ok[3];
#pragma unroll
  for (int u = 0; u < 3; ++u) {
    const int row = i - 1 + u, rc = min(max(row, 0), p.S - 1);
    ok[u] = row >= 0 && row < p.S;
#pragma unroll
    for (int q = 0; q < NCOL; ++q) raw[u][q] = base[rc * p.S + min(lane + 32 * q, rc)];
  }
  // Every load before any reduction: in v163 ptxas put later rows' loads (and the weights')
  // after the first rows' redux.sync, each DRAM round trip after the one before (the SASS;
  // ld.volatile and __syncwarp did not stop it). The rows' values carry a zero that depends on
  // every loaded element (their bits OR'ed, masked by S >> 8, 0 here: S <= 128), which ptxas
  // cannot fold.
  unsigned all = row_bits(br);
#pragma unroll
  for (int q = 0; q < kRowWeightRegs; ++q) all |= row_bits(wr[q]);
#pragma unroll
  for (int u = 0; u < 3; ++u)
#pragma unroll
    for (int q = 0; q < NCOL; ++q) all |= row_bits(raw[u][q]);
  const float zero = __uint_as_float(all & static_cast<unsigned>(p.S >> 8));
  static_assert(kRowMaxSeq < 256, "the load gate's mask S >> 8 must be 0");

  // 2. Probabilities, the three rows side by side.
  float x[3][NCOL], l[3];
#pragma unroll
  for (int u = 0; u < 3; ++u)
#pragma unroll
    for (int q = 0; q < NCOL; ++q)
      x[u][q] = ok[u] && lane + 32 * q <= i - 1 + u ? fmaf(to_f(raw[u][q]), kLog2e, zero) : -INFINITY;
  small_mark(p, kStLoads, x[1][0]);
  float m[3];
#pragma unroll
  for (int u = 0; u < 3; ++u) {
    m[u] = x[u][0];
#pragma unroll
    for (int q = 1; q < NCOL; ++q) m[u] = fmaxf(m[u], x[u][q]);
    m[u] = warp_max_redux(m[u]);
  }
#pragma unroll
  for (int u = 0; u < 3; ++u) {
    l[u] = 0.f;
#pragma unroll
    for (int q = 0; q < NCOL; ++q) {
      x[u][q] = ok[u] ? ex2(x[u][q] - m[u]) : 0.f;  // 2^-inf = 0 past the diagonal
      l[u] += x[u][q];
    }
    if constexpr (sizeof(T) == 2) l[u] = warp_sum_unit_redux<NCOL>(l[u]);
  }
  if constexpr (sizeof(T) != 2) {
#pragma unroll
    for (int o = 16; o; o /= 2)
#pragma unroll
      for (int u = 0; u < 3; ++u) l[u] += __shfl_xor_sync(0xffffffffu, l[u], o);
  }
#pragma unroll
  for (int u = 0; u < 3; ++u) {
    const float inv = ok[u] ? rcp_approx(l[u]) : 0.f;  // l >= 1 there
#pragma unroll
    for (int q = 0; q < NCOL; ++q) x[u][q] *= inv;
  }
  small_mark(p, kStProbs, x[1][0]);

  // 3. The warp's weights into its shared memory.
#pragma unroll
  for (int q = 0; q < kRowWeightRegs; ++q) {
    const int e = lane + 32 * q, o = e / 9;
    if (e < n_w) ws[(e - 9 * o) * p.O4 + o] = to_f(wr[q]);
  }
  if (c == 0 && lane < p.O) bias_s[lane] = to_f(br);
  __syncwarp();
  small_mark(p, kStWeights, ws[0]);

  // 4. Tap v of row u at column j is the row's probability at column j - 1 + v: the lane's
  // neighbours' (zero past the row's ends: a column past the diagonal already holds 0); at a
  // lane's edge, the next or previous column group's last or first lane.
  float tap[3][3][NCOL];
#pragma unroll
  for (int u = 0; u < 3; ++u)
#pragma unroll
    for (int q = 0; q < NCOL; ++q) {
      const float left = __shfl_up_sync(0xffffffffu, x[u][q], 1), right = __shfl_down_sync(0xffffffffu, x[u][q], 1);
      const float before = q > 0 ? __shfl_sync(0xffffffffu, x[u][q > 0 ? q - 1 : 0], 31) : 0.f;
      const float after = q + 1 < NCOL ? __shfl_sync(0xffffffffu, x[u][q + 1 < NCOL ? q + 1 : q], 0) : 0.f;
      tap[u][0][q] = lane > 0 ? left : before;
      tap[u][1][q] = x[u][q];
      tap[u][2][q] = lane < 31 ? right : after;
    }
  const float4* w4 = reinterpret_cast<const float4*>(ws);
  const int groups = p.O4 / 4;
#pragma unroll 1
  for (int og = 0; og < groups; ++og) {
    float acc[NCOL][4] = {};
#pragma unroll
    for (int u = 0; u < 3; ++u)
#pragma unroll
      for (int v = 0; v < 3; ++v) {
        const float4 wv = w4[(3 * u + v) * groups + og];
#pragma unroll
        for (int q = 0; q < NCOL; ++q) fma_heads4(acc[q], wv, tap[u][v][q]);
      }
#pragma unroll
    for (int oo = 0; oo < 4; ++oo)
#pragma unroll
      for (int q = 0; q < NCOL; ++q) part[((4 * og + oo) * p.C + c) * W + lane + 32 * q] = acc[q][oo];
  }
  small_mark(p, kStConv, part[lane]);
  __syncthreads();
  small_mark(p, kStBarrier);

  // 5. The channels' sums, a thread per (head, column): the C partial sums' loads issue together
  // (the channel loop is unrolled to kRowMaxC and predicated), one store a thread, a warp's 32
  // columns of one head side by side. v164 took a thread per (head group, column): its channel loop
  // and four branched stores (ptxas: one branch region a head) took 0.36 us of the seed's
  // 1.77 us block (its timeline), for ~40 instructions of work.
  T* y = static_cast<T*>(p.y) + static_cast<long long>(b) * (p.O * plane) + i * p.S;
  for (int t = threadIdx.x; t < W * p.O; t += blockDim.x) {
    const int o = t / W, j = t & (W - 1);
    float q[kRowMaxC];
#pragma unroll
    for (int cc = 0; cc < kRowMaxC; ++cc) q[cc] = cc < p.C ? part[(o * p.C + cc) * W + j] : 0.f;
    float sum = bias_s[o];
#pragma unroll
    for (int cc = 0; cc < kRowMaxC; ++cc) sum += q[cc];
    if (j < p.S) y[static_cast<unsigned>(o * plane + j)] = from_f<T>(j <= i ? sum : 0.f);
  }
  small_mark(p, kStExit);
}

}  // namespace mtabench::fused
