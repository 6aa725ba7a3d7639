#pragma once
// Row statistics of the fused kernel: the stats items (max and sum of each (row, channel,
// segment), merged per band by the band's last item), the local statistics of small seq, and a
// conv item's wait for and load of its rows' statistics.
#include "impls/fused/fused_common.cuh"

namespace mtabench::fused {

// Combines two (max, sum) pairs of the log2-domain softmax without branches (all lanes of a
// shuffle reduction stay converged): -inf marks "no elements", and ex2(-inf) = 0.
__device__ __forceinline__ void combine_nb(float& m, float& l, float m2, float l2) {
  const float mm = fmaxf(m, m2);
  const float s = mm == -INFINITY ? 0.f : mm;
  l = l * ex2(m - s) + l2 * ex2(m2 - s);
  m = mm;
}

// Max and sum of 2^(x log2e - max) of the n (<= 8) first values, log2 domain; (-inf, 0) if n = 0.
template <class T>
__device__ __forceinline__ float2 fold_vec8(const Vec8<T>& v, int n) {
  const T* h = reinterpret_cast<const T*>(&v);
  float x[8], m = -INFINITY;
#pragma unroll
  for (int q = 0; q < 8; ++q) {
    x[q] = q < n ? to_f(h[q]) * kLog2e : -INFINITY;
    m = fmaxf(m, x[q]);
  }
  const float s = m == -INFINITY ? 0.f : m;
  float l = 0.f;
#pragma unroll
  for (int q = 0; q < 8; ++q) l += ex2(x[q] - s);
  return make_float2(m, l);
}

// The (max, sum) of each group of L lanes (a power of two), combined by shuffles; every lane of
// the warp takes part.
__device__ __forceinline__ float2 reduce_lanes(float2 ml, int L) {
  for (int o = L >> 1; o; o >>= 1) {
    const float m2 = __shfl_xor_sync(0xffffffffu, ml.x, o);
    const float l2 = __shfl_xor_sync(0xffffffffu, ml.y, o);
    combine_nb(ml.x, ml.y, m2, l2);
  }
  return ml;
}

// Max and sum of 2^(s*log2e - max) over row[c0, c1), one warp (local statistics, small seq).
// Returned by value: v3's reference parameters put them in local memory around the call.
template <class T>
__device__ __noinline__ float2 row_stats(const T* row, long long c0, long long c1) {
  const int lane = threadIdx.x & 31;
  float m = -INFINITY, l = 0.f;
  for (long long e = c0 + lane * 8; e < c1; e += 512) {
    const Vec8<T> x = load_vec8(row + e, e, c1);
    const int nz = static_cast<int>(max(min(c1 - e - 256, 8ll), 0ll));
    const Vec8<T> z = nz > 0 ? load_vec8(row + e + 256, e + 256, c1) : Vec8<T>{};
    const float2 fx = fold_vec8<T>(x, static_cast<int>(min(c1 - e, 8ll)));
    const float2 fz = fold_vec8<T>(z, nz);
    combine_nb(m, l, fx.x, fx.y);
    combine_nb(m, l, fz.x, fz.y);
  }
  return reduce_lanes(make_float2(m, l), 32);
}

// ---- stats item --------------------------------------------------------------------------------
// The (row, channel, segment) units of one item: a warp takes steps st = warp, warp + 8, ... of
// 32 / SEGL units, NL steps at a time with all their loads issued before any is used (v3's
// row-at-a-time loop kept only two loads in flight per lane: stats items took ~16 serial DRAM
// round trips and tiles waited for them -- 20% of all warp time at the barrier after the
// ready-flag wait, Nsight Compute source counters, seq 4096).
template <class T, int NL>
__device__ void stats_item(const FusedParams& p, int b, int q, int chunk, int nch) {
  const T* scores = static_cast<const T*>(p.scores);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const long long i0 = static_cast<long long>(q) * p.R;
  const int rows = static_cast<int>(min(static_cast<long long>(p.R), p.S - i0));
  const int spi = p.CS / p.SEG, L = p.SEGL;
  const int lshift = __ffs(L) - 1, sshift = __ffs(spi) - 1;
  const int units = rows * p.C * spi, per_step = 32 >> lshift;
  const int steps = (units + per_step - 1) >> (5 - lshift);
  const int sub = lane >> lshift, col_in = (lane & (L - 1)) * 8;
  const long long c0 = static_cast<long long>(chunk) * p.CS;
  #pragma unroll 1
  for (int st0 = warp; st0 < steps; st0 += kWarps * NL) {
    Vec8<T> raw[NL];
    int n[NL];
#pragma unroll
    for (int k = 0; k < NL; ++k) {
      const int unit = (st0 + k * kWarps) * per_step + sub;
      const int pair = unit >> sshift, seg = unit & (spi - 1);
      const int rr = pair / p.C, c = pair - rr * p.C;
      const long long i = i0 + rr, e = c0 + seg * p.SEG + col_in;
      const long long c1 = min(c0 + p.CS, i + 1);
      n[k] = unit < units ? static_cast<int>(max(min(c1 - e, 8ll), 0ll)) : 0;
      if (n[k] > 0) {
        const T* src = scores + ((static_cast<long long>(b) * p.C + c) * p.S + i) * p.S + e;
        raw[k] = load_vec8(src, e, c1);
      } else {
        raw[k] = Vec8<T>{};
      }
    }
#pragma unroll
    for (int k = 0; k < NL; ++k) {
      const float2 ml = reduce_lanes(fold_vec8<T>(raw[k], n[k]), L);
      // Row i0 + rr, channel c: partial ((b S + i0) C + pair) nch_max + segment, pair = rr C + c.
      const int unit = (st0 + k * kWarps) * per_step + sub;
      if ((lane & (L - 1)) == 0 && unit < units)
        p.partials[((static_cast<long long>(b) * p.S + i0) * p.C + (unit >> sshift)) * p.nch_max + chunk * spi +
                   (unit & (spi - 1))] = ml;
    }
  }
  __shared__ int last;
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();  // our partials before the count
    last = atomicAdd(&p.band_count[b * p.Q + q], 1u) == static_cast<unsigned>(nch - 1);
  }
  __syncthreads();
  if (!last) return;
  // The last chunk of the band merges all segments of its rows.
  __threadfence();
  const int nseg = nch * spi;
  #pragma unroll 1
  for (int pair = threadIdx.x; pair < rows * p.C; pair += kThreads) {
    const int rr = pair / p.C, c = pair - rr * p.C;
    const long long i = i0 + rr;
    const float2* part = p.partials + ((static_cast<long long>(b) * p.S + i) * p.C + c) * p.nch_max;
    float m = -INFINITY, l = 0.f;
    for (int j = 0; j < nseg; ++j) {
      const float2 v = __ldcg(part + j);  // written by other blocks: bypass L1
      combine_nb(m, l, v.x, v.y);
    }
    __stcg(p.stats + (static_cast<long long>(b) * p.C + c) * p.S + i, make_float2(m, 1.f / l));
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    atomicExch(&p.band_ready[b * p.Q + q], 1u);
  }
}

__device__ __forceinline__ void wait_ready(const unsigned* flag) {
  while (*reinterpret_cast<const volatile unsigned*>(flag) == 0u) __nanosleep(100);
}

// ---- conv item: statistics of the tile's rows ----------------------------------------------------
template <class T>
__device__ void tile_stats(const FusedParams& p, char* smem, int b, long long i0) {
  float2* st = reinterpret_cast<float2*>(smem + p.sm_stats);
  const int halo_rows = p.R + 2 * p.r;
  if (p.local_stats) {
    const T* scores = static_cast<const T*>(p.scores);
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    #pragma unroll 1
    for (int pair = warp; pair < halo_rows * p.C; pair += kWarps) {
      const int pr = pair / p.C, c = pair - pr * p.C;
      const long long ip = i0 - p.r + pr;
      float2 ml = make_float2(-INFINITY, 0.f);
      if (ip >= 0 && ip < p.S) ml = row_stats(scores + ((static_cast<long long>(b) * p.C + c) * p.S + ip) * p.S, 0, ip + 1);
      if (lane == 0) st[pair] = make_float2(ml.x, ml.y > 0.f ? 1.f / ml.y : 0.f);
    }
  } else {
    const int q = static_cast<int>(i0 / p.R);
    if (threadIdx.x == 0) {
      if (p.r > 0 && q > 0) wait_ready(&p.band_ready[b * p.Q + q - 1]);
      wait_ready(&p.band_ready[b * p.Q + q]);
      if (p.r > 0 && q + 1 < p.Q) wait_ready(&p.band_ready[b * p.Q + q + 1]);
      __threadfence();
    }
    __syncthreads();
    #pragma unroll 1
    for (int pair = threadIdx.x; pair < halo_rows * p.C; pair += kThreads) {
      const int pr = pair / p.C, c = pair - pr * p.C;
      const long long ip = i0 - p.r + pr;
      st[pair] = (ip >= 0 && ip < p.S) ? __ldcg(p.stats + (static_cast<long long>(b) * p.C + c) * p.S + ip)
                                       : make_float2(-INFINITY, 0.f);
    }
  }
  __syncthreads();
}

}  // namespace mtabench::fused
