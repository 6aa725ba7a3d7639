#pragma once
// The fused multi-token-attention kernel (device code). One launch; each block takes work items
// in order (a ticket counter), so an item may wait only on earlier items:
//   stats item (b, band, chunk): max and sum of exp over a column chunk of the band's rows, all
//       channels; the last chunk of a band to finish merges them into the band's row statistics
//       and raises the band's ready flag.
//   conv item (b, band, tile): waits until the band and its neighbours are ready (the k x k
//       window reaches r rows up and down), builds the probability tile of its rows +- r and
//       columns +- r in shared memory (each score read again, now from L2), contracts it with
//       the weights (tensor cores for bf16/fp16, fp32 FMA for fp32), adds the bias, writes the
//       tile of y (zeros above the diagonal) with coalesced stores.
//   zero item (b, band, chunk): the band's columns beyond its last lower tile are all zeros.
// Small seq (local_stats): no stats items; a block computes the statistics of its own rows.
// All math in fp32; probabilities are rounded to the workload dtype only as tensor-core operands
// (as PyTorch rounds softmax output before its convolution).
#include "harness/device_dtype.cuh"
#include "impls/fused/fused_math.cuh"
#include "impls/fused/fused_params.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

namespace mtabench::fused {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

// Combines two (max, sum) pairs of the log2-domain softmax; -inf marks "no elements".
__device__ __forceinline__ void combine(float& m, float& l, float m2, float l2) {
  if (m2 == -INFINITY) return;
  if (m == -INFINITY) {
    m = m2;
    l = l2;
    return;
  }
  const float mm = fmaxf(m, m2);
  l = l * ex2(m - mm) + l2 * ex2(m2 - mm);
  m = mm;
}

__device__ __forceinline__ void warp_combine(float& m, float& l) {
  for (int o = 16; o; o /= 2) {
    const float m2 = __shfl_xor_sync(0xffffffffu, m, o);
    const float l2 = __shfl_xor_sync(0xffffffffu, l, o);
    combine(m, l, m2, l2);
  }
}

// Eight consecutive scores from e on (those at or past c1 read as -inf), times log2(e): one
// 16-byte load where the address allows, else scalar loads.
template <class T>
__device__ __forceinline__ void load8(const T* row, long long e, long long c1, float (&x)[8]) {
  const T* src = row + e;
  if (e + 8 <= c1 && (reinterpret_cast<std::uintptr_t>(src) & 15) == 0) {
    if constexpr (sizeof(T) == 2) {
      const uint4 v = *reinterpret_cast<const uint4*>(src);
      const T* h = reinterpret_cast<const T*>(&v);
#pragma unroll
      for (int q = 0; q < 8; ++q) x[q] = to_f(h[q]) * kLog2e;
    } else {
      const float4 a = reinterpret_cast<const float4*>(src)[0];
      const float4 b = reinterpret_cast<const float4*>(src)[1];
      x[0] = a.x * kLog2e, x[1] = a.y * kLog2e, x[2] = a.z * kLog2e, x[3] = a.w * kLog2e;
      x[4] = b.x * kLog2e, x[5] = b.y * kLog2e, x[6] = b.z * kLog2e, x[7] = b.w * kLog2e;
    }
  } else {
#pragma unroll
    for (int q = 0; q < 8; ++q) x[q] = e + q < c1 ? to_f(src[q]) * kLog2e : -INFINITY;
  }
}

__device__ __forceinline__ void fold8(const float (&x)[8], float& m, float& l) {
  float gm = x[0];
#pragma unroll
  for (int q = 1; q < 8; ++q) gm = fmaxf(gm, x[q]);
  float gl = 0.f;
#pragma unroll
  for (int q = 0; q < 8; ++q) gl += ex2(x[q] - gm);
  combine(m, l, gm, gl);
}

// Max and sum of 2^(s*log2e - max) over row[c0, c1), one warp (local statistics, small seq).
// Returned by value: v3's reference parameters put them in local memory around the call.
template <class T>
__device__ __noinline__ float2 row_stats(const T* row, long long c0, long long c1) {
  const int lane = threadIdx.x & 31;
  float m = -INFINITY, l = 0.f;
  for (long long e = c0 + lane * 8; e < c1; e += 512) {
    float x[8], z[8];
    load8(row, e, c1, x);
    load8(row, e + 256, c1, z);
    fold8(x, m, l);
    fold8(z, m, l);
  }
  warp_combine(m, l);
  return make_float2(m, l);
}

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

// Contraction index kk (over window rows u, window columns v < KW, channels c; channels
// fastest) to its parts.
struct KIndex {
  int u, v, c;
  bool pad;
};
__device__ __forceinline__ KIndex split_k(const FusedParams& p, int kk) {
  KIndex x;
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
template <class T>
__device__ void load_weight_fragments(const FusedParams& p, uint2* wf, int s0, int s1) {
  #pragma unroll 1
  for (int e = threadIdx.x; e < (s1 - s0) * p.NT * 32; e += kThreads) {
    const int lane = e & 31, snt = e >> 5;
    wf[e] = weight_fragment<T>(p, s0 + snt / p.NT, snt % p.NT, lane);
  }
}

template <class T, bool MMA>
__device__ void setup_block(const FusedParams& p, char* smem) {
  float* bias_s = reinterpret_cast<float*>(smem + p.sm_bias);
  const T* bias = static_cast<const T*>(p.bias);
  for (int o = threadIdx.x; o < (p.O + 7) / 8 * 8; o += kThreads) bias_s[o] = o < p.O ? to_f(bias[o]) : 0.f;
  if constexpr (MMA) {
    if (p.kchunk == p.ksteps) load_weight_fragments<T>(p, reinterpret_cast<uint2*>(smem + p.sm_w), 0, p.ksteps);
    // A-fragment word offsets in the probability tile for each k-step and t: the pair
    // (2t, 2t+1) and the pair (2t+8, 2t+9). Padding points at offset 0 (a finite value that
    // meets a zero weight).
    int* koff = reinterpret_cast<int*>(smem + p.sm_koff);
    if (p.ldsm) {
      // Byte offset of each 8-channel chunk (two per k-step) from an m-tile row's column.
      #pragma unroll 1
      for (int e = threadIdx.x; e < p.ksteps * 2; e += kThreads) {
        const KIndex x = split_k(p, e * 8);
        koff[e] = x.pad ? 0 : ((x.u * p.PW + x.v) * p.pitch_w + x.c / 2) * 4;
      }
      return;
    }
    #pragma unroll 1
    for (int e = threadIdx.x; e < p.ksteps * 8; e += kThreads) {
      const int s = e >> 3, t = (e >> 1) & 3, h = e & 1;
      const KIndex x = split_k(p, s * 16 + 2 * t + 8 * h);
      koff[e] = x.pad ? 0 : (x.u * p.PW + x.v) * p.pitch_w + (x.c >> 1);
    }
  } else if (!p.w_global) {  // else the weights are read from global memory: no room here
    float* ws = reinterpret_cast<float*>(smem + p.sm_w);
    const T* w = static_cast<const T*>(p.weight);
    const int per_o = p.C * p.K * p.K;
    for (int e = threadIdx.x; e < (p.O + 3) / 4 * 4 * per_o; e += kThreads)
      ws[e] = e < p.O * per_o ? to_f(w[e]) : 0.f;
  }
}

// ---- stats item --------------------------------------------------------------------------------
// combine() without branches (all lanes of a shuffle reduction stay converged): -inf marks "no
// elements", and ex2(-inf) = 0.
__device__ __forceinline__ void combine_nb(float& m, float& l, float m2, float l2) {
  const float mm = fmaxf(m, m2);
  const float s = mm == -INFINITY ? 0.f : mm;
  l = l * ex2(m - s) + l2 * ex2(m2 - s);
  m = mm;
}

// Eight scores as raw bits (one 16-byte vector for 16-bit types, two for fp32), columns at or
// past c1 excluded later.
template <class T>
struct Vec8 {
  uint4 w[sizeof(T) == 4 ? 2 : 1];
};
template <class T>
__device__ __forceinline__ Vec8<T> load_vec8(const T* src, long long e, long long c1) {
  Vec8<T> v;
  constexpr int words = sizeof(Vec8<T>) / 16;
  if (e + 8 <= c1 && (reinterpret_cast<std::uintptr_t>(src) & 15) == 0) {
#pragma unroll
    for (int x = 0; x < words; ++x) v.w[x] = reinterpret_cast<const uint4*>(src)[x];
  } else {
    T* h = reinterpret_cast<T*>(&v);
#pragma unroll
    for (int q = 0; q < 8; ++q) h[q] = e + q < c1 ? src[q] : T(0.f);
  }
  return v;
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
      float2 ml = fold_vec8<T>(raw[k], n[k]);
      for (int o = L >> 1; o; o >>= 1) {
        const float m2 = __shfl_xor_sync(0xffffffffu, ml.x, o);
        const float l2 = __shfl_xor_sync(0xffffffffu, ml.y, o);
        combine_nb(ml.x, ml.y, m2, l2);
      }
      const int unit = (st0 + k * kWarps) * per_step + sub;
      if ((lane & (L - 1)) == 0 && unit < units) {
        const int pair = unit >> sshift, seg = unit & (spi - 1);
        const int rr = pair / p.C, c = pair - rr * p.C;
        p.partials[((static_cast<long long>(b) * p.S + i0 + rr) * p.C + c) * p.nch_max + chunk * spi + seg] = ml;
      }
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

// ---- probability tile ----------------------------------------------------------------------------
// p = 2^(s*log2e - max) / sum for rows i0-r .. i0+R+r-1 and columns j0-r .. j0+TJ+r-1 of
// channels [c0, c0+nch): 0 outside the causal region and outside the tensor (the convolution's
// zero padding), and for channels >= C (padding). Element (row, column, channel) goes to
// dst[row*s_row + column*s_col + channel*s_ch]. A warp takes two (row, channel) rows at a time,
// lanes over columns; all ten loads of a lane are issued before any is used.
constexpr int kColChunks = 5;  // lanes x 5 = 160 >= TJ + 2r for TJ <= 128, r <= 5
template <class T>
__device__ void fill_probabilities(const FusedParams& p, const float2* st, T* dst, int b, long long i0, long long j0,
                                   int c0, int nch, int s_row, int s_col, int s_ch) {
  const T* scores = static_cast<const T*>(p.scores);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int tasks = (p.R + 2 * p.r) * nch;
  #pragma unroll 1
  for (int t0 = warp; t0 < tasks; t0 += 2 * kWarps) {
    float raw[2][kColChunks];
    unsigned live = 0;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int task = t0 + h * kWarps;
      const int pr = task / nch, c = c0 + task - pr * nch;
      const long long ip = i0 - p.r + pr;
      const bool row_ok = task < tasks && c < p.C && ip >= 0 && ip < p.S;
      const T* src = scores + (row_ok ? ((static_cast<long long>(b) * p.C + c) * p.S + ip) * p.S : 0);
#pragma unroll
      for (int q = 0; q < kColChunks; ++q) {
        const int pc = lane + 32 * q;
        const long long jp = j0 - p.r + pc;
        const bool ok = row_ok && pc < p.PW && jp >= 0 && jp <= ip;
        raw[h][q] = ok ? to_f(src[jp]) : 0.f;
        live |= (ok ? 1u : 0u) << (h * kColChunks + q);
      }
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int task = t0 + h * kWarps;
      if (task >= tasks) break;
      const int pr = task / nch, cl = task - pr * nch, c = c0 + cl;
      const float2 sv = c < p.C ? st[pr * p.C + c] : make_float2(0.f, 0.f);
#pragma unroll
      for (int q = 0; q < kColChunks; ++q) {
        const int pc = lane + 32 * q;
        if (pc >= p.PW) break;
        const bool ok = (live >> (h * kColChunks + q)) & 1u;
        dst[pr * s_row + pc * s_col + cl * s_ch] = from_f<T>(ok ? ex2(raw[h][q] * kLog2e - sv.x) * sv.y : 0.f);
      }
    }
  }
}

// The same for four channels (heads_in 3 or 4) of a 16-bit type, seq a multiple of 8 (fill4):
// a task is one 16-byte vector of columns [jg, jg + 8) of one row, all four channels: four
// 16-byte loads, one FFMA and one EX2 per element (the sum is folded into the exponent:
// 2^(x log2e - max - log2 sum)), and four 16-byte stores of the eight channel-last columns. Tile
// column 0 is output column j0 - 8, so vectors line up in both memories.
template <class T>
__device__ __forceinline__ unsigned pack2(float lo, float hi) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<const unsigned*>(&v);
  } else {
    const __half2 v = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<const unsigned*>(&v);
  }
}
template <class T>
__device__ __forceinline__ float2 unpack2(unsigned w) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return make_float2(__uint_as_float(w << 16), __uint_as_float(w & 0xffff0000u));
  } else {
    return __half22float2(*reinterpret_cast<const __half2*>(&w));
  }
}

template <class T>
__device__ void fill_probabilities4(const FusedParams& p, const float2* st, unsigned* dst, int b, long long i0,
                                    long long j0) {
  const T* scores = static_cast<const T*>(p.scores);
  const int halo_rows = p.R + 2 * p.r, nv = p.TJ / 8 + 2;
  const long long plane = p.S * p.S;
  const T* batch = scores + static_cast<long long>(b) * p.C * plane;
  #pragma unroll 1
  for (int task = threadIdx.x; task < halo_rows * nv; task += kThreads) {
    const int pr = task / nv, v = task - pr * nv;
    const long long ip = i0 - p.r + pr, jg = j0 - 8 + 8 * v;
    // Valid columns of this vector: [jg, jg + n) with n = clamp(ip - jg + 1, 0, 8).
    const int n = (ip < 0 || ip >= p.S || jg < 0) ? 0 : static_cast<int>(min(max(ip - jg + 1, 0ll), 8ll));
    uint4 out[4];  // 8 columns x 2 words (channels 0-1, 2-3)
#pragma unroll
    for (int x = 0; x < 4; ++x) out[x] = make_uint4(0, 0, 0, 0);
    if (n > 0) {
      const T* src = batch + ip * p.S + jg;
      uint4 raw[4];
#pragma unroll
      for (int c = 0; c < 4; ++c)
        raw[c] = c < p.C ? *reinterpret_cast<const uint4*>(src + c * plane) : make_uint4(0, 0, 0, 0);
      float mb[4];
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        const float2 sv = c < p.C ? st[pr * p.C + c] : make_float2(0.f, 1.f);
        mb[c] = sv.x - __log2f(sv.y);  // max + log2(sum)
      }
      unsigned* o = reinterpret_cast<unsigned*>(out);
#pragma unroll
      for (int h = 0; h < 4; ++h) {  // column pair (2h, 2h + 1)
        float pc[4][2];
#pragma unroll
        for (int c = 0; c < 4; ++c) {
          const float2 x = unpack2<T>((&raw[c].x)[h]);
          pc[c][0] = c < p.C ? ex2(fmaf(x.x, kLog2e, -mb[c])) : 0.f;
          pc[c][1] = c < p.C ? ex2(fmaf(x.y, kLog2e, -mb[c])) : 0.f;
        }
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const bool ok = 2 * h + e < n;
          o[(2 * h + e) * 2] = ok ? pack2<T>(pc[0][e], pc[1][e]) : 0u;
          o[(2 * h + e) * 2 + 1] = ok ? pack2<T>(pc[2][e], pc[3][e]) : 0u;
        }
      }
    }
    uint4* d = reinterpret_cast<uint4*>(dst + (pr * p.PW + 8 * v) * 2);
#pragma unroll
    for (int x = 0; x < 4; ++x) d[x] = out[x];
  }
}

// Staging tile to y: each (head, row) is TJ contiguous elements; 16-byte stores where aligned.
template <class T>
__device__ void store_staging(const FusedParams& p, const T* ys, int b, long long i0, long long j0) {
  const int yp = p.TJ + 8;
  T* y = static_cast<T*>(p.y);
  const int vshift = __ffs(p.TJ / 8) - 1, rshift = __ffs(p.R) - 1;
  #pragma unroll 1
  for (int e = threadIdx.x; e < (p.O * p.R) << vshift; e += kThreads) {
    const int v = e & ((1 << vshift) - 1), orow = e >> vshift;
    const int rr = orow & (p.R - 1), o = orow >> rshift;
    const long long i = i0 + rr, j = j0 + v * 8;
    if (i >= p.S || j >= p.S) continue;
    T* dst = y + ((static_cast<long long>(b) * p.O + o) * p.S + i) * p.S + j;
    const T* src = ys + o * p.yhp + rr * yp + v * 8;
    if (j + 8 <= p.S && (reinterpret_cast<std::uintptr_t>(dst) & 15) == 0) {
      *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(src);
    } else {
#pragma unroll 1
      for (int x = 0; x < 8 && j + x < p.S; ++x) dst[x] = src[x];
    }
  }
}

// ---- conv item, tensor-core path for 1-4 heads out ---------------------------------------------
// The tile's R x TJ positions times the heads, contracted over K*KW*Cp on mma.m16n8k16 with the
// column interleave (H = 8 / heads rounded up > 1: an n-tile's 8 columns are (head, column
// offset)): A is the probability tile read in place (im2col by address offsets, 32-bit loads of
// channel pairs), B the weight fragments. A warp owns TJ/8 m-tiles (16 positions each).
template <class T>
__device__ void conv_item_mma(const FusedParams& p, char* smem, int b, int q, int tile) {
  constexpr int NT = 1, MW = 8;  // 8 accumulator tiles (32 registers)
  const long long i0 = static_cast<long long>(q) * p.R, j0 = static_cast<long long>(tile) * p.TJ;
  tile_stats<T>(p, smem, b, i0);
  T* ptile = reinterpret_cast<T*>(smem + p.sm_p);
  const int pitch_h = 2 * p.pitch_w;
  if (p.fill4)
    fill_probabilities4<T>(p, reinterpret_cast<const float2*>(smem + p.sm_stats), reinterpret_cast<unsigned*>(ptile),
                           b, i0, j0);
  else
    fill_probabilities<T>(p, reinterpret_cast<const float2*>(smem + p.sm_stats), ptile, b, i0, j0, 0, p.Cp,
                          p.PW * pitch_h, pitch_h, 1);
  __syncthreads();

  const unsigned* pw = reinterpret_cast<const unsigned*>(ptile);
  uint2* wf = reinterpret_cast<uint2*>(smem + p.sm_w);
  const int* koff = reinterpret_cast<const int*>(smem + p.sm_koff);
  const float* bias_s = reinterpret_cast<const float*>(smem + p.sm_bias);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  // An m-tile is 16 rows of A: 16 positions H columns apart (row g: column H*g); it covers 16*H
  // columns of one output row. col_tiles m-tiles per row (a power of two).
  const int span = 16 * p.H, col_tiles = p.TJ / span, per_warp = p.R * col_tiles / kWarps;
  const int ct_shift = __ffs(col_tiles) - 1;
  // A-fragment word address of m-tile mt, row g: consecutive m-tiles of a warp walk along a
  // row's column blocks, then on to the next row.
  const int m0 = warp * per_warp;
  auto base_of = [&](int mt) {
    const int m = m0 + mt;
    return ((m >> ct_shift) * p.PW + p.col0 + (m & (col_tiles - 1)) * span + p.H * g) * p.pitch_w;
  };
  float acc[MW][NT][4];
#pragma unroll
  for (int mt = 0; mt < MW; ++mt)
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
      for (int x = 0; x < 4; ++x) acc[mt][nt][x] = 0.f;
  for (int kc = 0; kc < p.ksteps; kc += p.kchunk) {
    const int kend = min(kc + p.kchunk, p.ksteps);
    if (p.kchunk < p.ksteps) {  // weights stream through shared memory chunk by chunk
      __syncthreads();
      load_weight_fragments<T>(p, wf, kc, kend);
      __syncthreads();
    }
#pragma unroll 1
    for (int s = kc; s < kend; ++s) {
      const int off0 = koff[s * 8 + t * 2], off1 = koff[s * 8 + t * 2 + 1];
      uint2 bf[NT];
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) bf[nt] = wf[((s - kc) * NT + nt) * 32 + lane];
#pragma unroll
      for (int mt = 0; mt < MW; ++mt) {
        if (mt >= per_warp) break;
        const int b0 = base_of(mt), b1 = b0 + 8 * p.H * p.pitch_w;
        const unsigned a[4] = {pw[b0 + off0], pw[b1 + off0], pw[b0 + off1], pw[b1 + off1]};
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) mma16816<T>(acc[mt][nt], a, bf[nt].x, bf[nt].y);
      }
    }
  }
  // Accumulators to the staging tile [head][row][column]: bias added, zeros above the diagonal.
  // Accumulator x of n-tile nt is D[A row g + 8*(x>>1)][n = nt*8 + 2t + (x&1)]; with H > 1
  // (then NT = 1), n = (head o, column offset h) and x, x+1 are adjacent columns of one head.
  T* ys = reinterpret_cast<T*>(smem + p.sm_y);
  const int yp = p.TJ + 8, ryp = p.yhp;
  const int o_t = (2 * t) / p.H, h_t = 2 * t - o_t * p.H;  // H > 1: this thread's head, column
#pragma unroll
  for (int mt = 0; mt < MW; ++mt) {
    if (mt >= per_warp) break;
    const int m = m0 + mt, rho = m >> ct_shift;
    const int col0 = (m & (col_tiles - 1)) * span + p.H * g;  // column of A row g
    const long long jrel = j0 + col0 - (i0 + rho);           // j - i at that column
    T* row = ys + rho * yp + col0;
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int dc = half * 8 * p.H;  // A row g + 8
      if (o_t < p.O) {
        const long long d = jrel + dc + h_t;
        const float bo = bias_s[o_t];
        const unsigned lo = bits16(from_f<T>(d <= 0 ? acc[mt][0][2 * half] + bo : 0.f));
        const unsigned hi = bits16(from_f<T>(d + 1 <= 0 ? acc[mt][0][2 * half + 1] + bo : 0.f));
        *reinterpret_cast<unsigned*>(row + o_t * ryp + dc + h_t) = lo | (hi << 16);
      }
    }
  }
  __syncthreads();
  store_staging<T>(p, ys, b, i0, j0);
  __syncthreads();  // the staging tile and the probability tile are reused by the next item
}

// The probability tile of the ldmatrix path (16-bit types, Cp a multiple of 8): a task is one
// 8-column vector of one (row, channel), channels fastest, so a warp's 2-byte shared stores of
// one column are consecutive (no bank conflicts) and each lane issues one 16-byte load per task
// (v3 loaded 2 bytes per lane per (row, channel): ~44 dependent L2 round trips per tile at 32
// channels). Tile column 0 is output column j0 - 8. Four tasks per thread are loaded before any
// is used. Task indices are split with float reciprocals (exact for indices below 2^20).
__device__ __forceinline__ int div_small(int x, float inv) { return static_cast<int>((x + 0.5f) * inv); }

template <class T>
__device__ void fill_channels(const FusedParams& p, const float2* st, T* dst, int b, long long i0, long long j0) {
  constexpr int U = 4;
  const int nv = p.TJ / 8 + 2, halo_rows = p.R + 2 * p.r, tasks = halo_rows * nv * p.Cp;
  const int pitch_h = 2 * p.pitch_w;
  const float icp = 1.f / p.Cp, inv = 1.f / nv;
  const T* scores = static_cast<const T*>(p.scores);
  #pragma unroll 1
  for (int t0 = threadIdx.x; t0 < tasks; t0 += kThreads * U) {
    Vec8<T> raw[U];
    int n[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int task = t0 + u * kThreads, rest = div_small(task, icp), c = task - rest * p.Cp;
      const int pr = div_small(rest, inv), v = rest - pr * nv;
      const long long ip = i0 - p.r + pr, jg = j0 - 8 + 8 * v;
      const bool ok = task < tasks && c < p.C && ip >= 0 && ip < p.S && jg >= 0;
      n[u] = ok ? static_cast<int>(min(ip - jg + 1, 8ll)) : 0;  // columns up to the diagonal
      if (n[u] > 0) {
        const T* src = scores + ((static_cast<long long>(b) * p.C + c) * p.S + ip) * p.S + jg;
        raw[u] = load_vec8(src, jg, min(jg + 8, p.S));
      } else {
        raw[u] = Vec8<T>{};
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int task = t0 + u * kThreads;
      if (task >= tasks) break;
      const int rest = div_small(task, icp), c = task - rest * p.Cp;
      const int pr = div_small(rest, inv), v = rest - pr * nv;
      float mb = 0.f;
      if (n[u] > 0) {
        const float2 sv = st[pr * p.C + c];
        mb = sv.x - __log2f(sv.y);  // max + log2(sum): one FFMA and one EX2 per element
      }
      const T* h = reinterpret_cast<const T*>(&raw[u]);
      T* d = dst + (pr * p.PW + 8 * v) * pitch_h + c;
#pragma unroll
      for (int e = 0; e < 8; ++e) d[e * pitch_h] = from_f<T>(e < n[u] ? ex2(fmaf(to_f(h[e]), kLog2e, -mb)) : 0.f);
    }
  }
}

// ---- conv item, ldmatrix path (heads_out > 4) -------------------------------------------------
// The tile's R x TJ positions times NT*8 heads, contracted over the K*K taps x Cp channels in
// chunks of 8 channels. The probability tile is channel-last with a column pitch of an odd
// number of 16-byte units; an A fragment (16 positions x two chunks) is one ldmatrix.x4 whose
// lanes point at (position, chunk): lanes 0-7 and 8-15 positions 0-7 and 8-15 of the first
// chunk, lanes 16-31 the same of the second. im2col is the chunk's byte offset (u*PW + v)
// columns away. B fragments are precomputed in shared memory (one 8-byte load per n-tile).
// A warp owns MW m-tiles (16 consecutive columns of one row each) x NT n-tiles.
__device__ __forceinline__ void ldmatrix_x4(unsigned (&a)[4], unsigned addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3])
               : "r"(addr));
}

template <class T, int NT, int MW>
__device__ void conv_item_ldsm(const FusedParams& p, char* smem, int b, int q, int tile) {
  const long long i0 = static_cast<long long>(q) * p.R, j0 = static_cast<long long>(tile) * p.TJ;
  tile_stats<T>(p, smem, b, i0);
  T* ptile = reinterpret_cast<T*>(smem + p.sm_p);
  fill_channels<T>(p, reinterpret_cast<const float2*>(smem + p.sm_stats), ptile, b, i0, j0);
  __syncthreads();

  const uint2* wf = reinterpret_cast<const uint2*>(smem + p.sm_w);
  const int* koff = reinterpret_cast<const int*>(smem + p.sm_koff);
  const float* bias_s = reinterpret_cast<const float*>(smem + p.sm_bias);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  // The caller picks MW = TJ / 8, so every warp owns exactly MW m-tiles: the loops below have no
  // run-time bounds, and a k-step's ldmatrix loads all issue before its mma (v4 first had a
  // per-m-tile bound check: each load waited on the branch before it, each mma on its load).
  const int col_tiles = p.TJ >> 4;
  const int ct_shift = __ffs(col_tiles) - 1, m0 = warp * MW;
  // This lane's ldmatrix row: position (lane & 15) of the m-tile, chunk lane >> 4 of the k-step.
  const unsigned tile_addr = static_cast<unsigned>(__cvta_generic_to_shared(ptile));
  const int cpitch = p.pitch_w * 4, half = lane >> 4;
  unsigned abase[MW];
#pragma unroll
  for (int mt = 0; mt < MW; ++mt) {
    const int m = m0 + mt;
    abase[mt] = tile_addr + ((m >> ct_shift) * p.PW + p.col0 + ((m & (col_tiles - 1)) << 4) + (lane & 15)) * cpitch;
  }
  float acc[MW][NT][4];
#pragma unroll
  for (int mt = 0; mt < MW; ++mt)
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
      for (int x = 0; x < 4; ++x) acc[mt][nt][x] = 0.f;
  for (int kc = 0; kc < p.ksteps; kc += p.kchunk) {
    const int kend = min(kc + p.kchunk, p.ksteps);
    if (p.kchunk < p.ksteps) {  // weights stream through shared memory chunk by chunk
      __syncthreads();
      load_weight_fragments<T>(p, reinterpret_cast<uint2*>(smem + p.sm_w), kc, kend);
      __syncthreads();
    }
#pragma unroll 2
    for (int s = kc; s < kend; ++s) {
      const unsigned off = static_cast<unsigned>(koff[s * 2 + half]);
      uint2 bf[NT];
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) bf[nt] = wf[((s - kc) * NT + nt) * 32 + lane];
      unsigned a[MW][4];
#pragma unroll
      for (int mt = 0; mt < MW; ++mt) ldmatrix_x4(a[mt], abase[mt] + off);
#pragma unroll
      for (int mt = 0; mt < MW; ++mt)
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) mma16816<T>(acc[mt][nt], a[mt], bf[nt].x, bf[nt].y);
    }
  }
  // Accumulator x of n-tile nt is (position g + 8*(x>>1), head nt*8 + 2t + (x&1)) to the
  // staging tile [head][row][column] (it overlays the probability tile: wait for every warp).
  __syncthreads();
  T* ys = reinterpret_cast<T*>(smem + p.sm_y);
  const int yp = p.TJ + 8;
#pragma unroll
  for (int mt = 0; mt < MW; ++mt) {
    const int m = m0 + mt, rho = m >> ct_shift, col = ((m & (col_tiles - 1)) << 4) + g;
    const long long jrel = j0 + col - (i0 + rho);  // j - i of position g
    T* row = ys + rho * yp + col;
#pragma unroll
    for (int hr = 0; hr < 2; ++hr) {
      const bool keep = jrel + 8 * hr <= 0;
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) {
        const int n = nt * 8 + 2 * t;
        if (n < p.O) row[n * p.yhp + 8 * hr] = from_f<T>(keep ? acc[mt][nt][2 * hr] + bias_s[n] : 0.f);
        if (n + 1 < p.O) row[(n + 1) * p.yhp + 8 * hr] = from_f<T>(keep ? acc[mt][nt][2 * hr + 1] + bias_s[n + 1] : 0.f);
      }
    }
  }
  __syncthreads();
  store_staging<T>(p, ys, b, i0, j0);
  __syncthreads();  // the staging tile and the probability tile are reused by the next item
}

// ---- conv item, fp32 FMA path --------------------------------------------------------------------
// 256 threads = 16 rows x 16 groups of 8 columns (TJ = 128); each thread accumulates 8 columns x
// 4 heads at a time, over channel groups of CG (one probability tile per group). KT > 0: the
// kernel width at compile time (registers hold the row window).
template <int KT>
__device__ void conv_item_fma(const FusedParams& p, char* smem, int b, int q, int tile) {
  const long long i0 = static_cast<long long>(q) * p.R, j0 = static_cast<long long>(tile) * p.TJ;
  tile_stats<float>(p, smem, b, i0);
  const float2* st = reinterpret_cast<const float2*>(smem + p.sm_stats);
  float* pt = reinterpret_cast<float*>(smem + p.sm_p);
  const int halo_rows = p.R + 2 * p.r, pwp = (p.PW + 3) / 4 * 4;
  const bool one_tile = p.C <= p.CG;
  if (one_tile) {
    fill_probabilities<float>(p, st, pt, b, i0, j0, 0, p.C, pwp, 1, halo_rows * pwp);
    __syncthreads();
  }
  // Weights [o][c][u][v]: in shared memory, heads padded to a multiple of 4 with zeros; or, when
  // too many, straight from global memory (the same address in every thread: a broadcast).
  const float* ws = p.w_global ? static_cast<const float*>(p.weight) : reinterpret_cast<const float*>(smem + p.sm_w);
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
    for (int cg = 0; cg < p.C; cg += p.CG) {
      if (!one_tile) {
        __syncthreads();
        fill_probabilities<float>(p, st, pt, b, i0, j0, cg, min(p.CG, p.C - cg), pwp, 1, halo_rows * pwp);
        __syncthreads();
      }
      for (int cl = 0; cl < min(p.CG, p.C - cg); ++cl) {
        const int c = cg + cl;
        const float* wc = ws + (oc * p.C + c) * KK;  // weight [oc + oo][c][u][v] at wc[oo*C*KK + u*K + v]
        if constexpr (KT > 0) {
#pragma unroll
          for (int u = 0; u < KT; ++u) {
            const float* row = pt + (cl * halo_rows + rho + u) * pwp + g0;
            float win[8 + KT - 1];
#pragma unroll
            for (int x = 0; x < 8 + KT - 1; ++x) win[x] = row[x];
#pragma unroll
            for (int v = 0; v < KT; ++v) {
              float wv[4];
#pragma unroll
              for (int oo = 0; oo < 4; ++oo) wv[oo] = oc + oo < p.O ? wc[oo * p.C * KK + u * KT + v] : 0.f;
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
              float wv[4];
#pragma unroll
              for (int oo = 0; oo < 4; ++oo) wv[oo] = oc + oo < p.O ? wc[oo * p.C * KK + u * K + v] : 0.f;
#pragma unroll
              for (int x = 0; x < 8; ++x)
#pragma unroll
                for (int oo = 0; oo < 4; ++oo) acc[x][oo] = fmaf(wv[oo], row[x + v], acc[x][oo]);
            }
          }
        }
      }
    }
    if (i < p.S) {
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
          reinterpret_cast<float4*>(dst)[0] = make_float4(out[0], out[1], out[2], out[3]);
          reinterpret_cast<float4*>(dst)[1] = make_float4(out[4], out[5], out[6], out[7]);
        } else {
          for (int x = 0; x < 8 && j + x < p.S; ++x) dst[x] = out[x];
        }
      }
    }
  }
  __syncthreads();
}

// ---- zero item --------------------------------------------------------------------------------
// Columns [c0, c1) of the band's rows, every head: a warp per row, lanes over 16-byte vectors
// (v1/v2 divided a 64-bit index per vector).
template <class T>
__device__ void zero_item(const FusedParams& p, int b, int q, int chunk, int lower) {
  const long long i0 = static_cast<long long>(q) * p.R;
  const long long c0 = static_cast<long long>(lower) * p.TJ + static_cast<long long>(chunk) * p.ZC;
  const int n = static_cast<int>(min(c0 + p.ZC, p.S) - c0);
  const int rows = static_cast<int>(min(static_cast<long long>(p.R), p.S - i0));
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  constexpr int per_vec = 16 / sizeof(T);
  T* y = static_cast<T*>(p.y);
  #pragma unroll 1
  for (int orow = warp; orow < p.O * rows; orow += kWarps) {
    const int o = orow / rows, rr = orow - o * rows;
    T* dst = y + ((static_cast<long long>(b) * p.O + o) * p.S + i0 + rr) * p.S + c0;
    // Scalar head up to 16-byte alignment (rows of a seq that is not a multiple of 8), vectors,
    // scalar tail.
    const int head = min(n, static_cast<int>(((16 - (reinterpret_cast<std::uintptr_t>(dst) & 15)) & 15) / sizeof(T)));
    const int vecs = (n - head) / per_vec;
    if (lane < head) dst[lane] = from_f<T>(0.f);
    uint4* vd = reinterpret_cast<uint4*>(dst + head);
    for (int v = lane; v < vecs; v += 32) vd[v] = make_uint4(0, 0, 0, 0);
    for (int x = head + vecs * per_vec + lane; x < n; x += 32) dst[x] = from_f<T>(0.f);
  }
}

// ---- the kernel ----------------------------------------------------------------------------------
template <class T, bool MMA, int NT, int KT, bool NARROW>
__device__ void run_item(const FusedParams& p, char* smem, int4 it) {
  switch (it.x) {
    case kStatsItem: {
      // Number of chunks of this band: columns up to its last row.
      const long long last = min(static_cast<long long>(it.z + 1) * p.R, p.S);
      // Loads in flight per lane: 8 vectors (32 registers) where registers allow; 4 in the
      // 80-register few-heads instance and for fp32 (8 registers per vector).
      constexpr int NL = (MMA && NT == 1) || !MMA ? 4 : 8;
      stats_item<T, NL>(p, it.y, it.z, it.w, static_cast<int>((last + p.CS - 1) / p.CS));
      break;
    }
    case kConvItem:
      // The ldmatrix path with its wide tile (8 * ldsm_mtiles(NT) columns) or, NARROW, 16.
      if constexpr (MMA && NT > 1) conv_item_ldsm<T, NT, NARROW ? 2 : LdsmMtiles<NT>::value>(p, smem, it.y, it.z, it.w);
      else if constexpr (MMA) conv_item_mma<T>(p, smem, it.y, it.z, it.w);  // 1-4 heads out
      else conv_item_fma<KT>(p, smem, it.y, it.z, it.w);
      break;
    default: {
      const long long last = min(static_cast<long long>(it.z + 1) * p.R, p.S);
      zero_item<T>(p, it.y, it.z, it.w, static_cast<int>((last + p.TJ - 1) / p.TJ));
      break;
    }
  }
}

// Three blocks per SM (24 warps) for the few-heads tensor-core instance: its time is spent
// waiting on loads, and 98 registers had allowed only two (Nsight Compute, v2: 0.77 eligible
// warps per scheduler). Two for the fp32 FMA instances, which otherwise take 167 registers.
template <bool MMA, int NT>
constexpr int min_blocks() { return MMA && NT == 1 ? 3 : !MMA ? 2 : 1; }

// NARROW: the ldmatrix path's 16-column tile (the plan's fallback when the wide one does not
// fit in shared memory): an instance of its own, so the wide instances' code does not change.
template <class T, bool MMA, int NT, int KT, bool NARROW = false>
__global__ void __launch_bounds__(kThreads, min_blocks<MMA, NT>()) fused_kernel(const FusedParams p) {
  extern __shared__ __align__(16) char smem[];
  setup_block<T, MMA>(p, smem);
  __syncthreads();
  if (p.local_stats) {  // no dependencies between items: one item per block
    run_item<T, MMA, NT, KT, NARROW>(p, smem, p.items[blockIdx.x]);
    return;
  }
  __shared__ unsigned next;
  if (threadIdx.x == 0) next = atomicAdd(p.ticket, 1u);
  __syncthreads();
  for (;;) {
    const unsigned cur = next;
    __syncthreads();
    if (cur >= static_cast<unsigned>(p.n_items)) break;
    // Take the next ticket now so its latency hides behind this item. Tickets are taken in
    // order and an item only waits on smaller tickets, whose holders are running: no deadlock.
    if (threadIdx.x == 0) next = atomicAdd(p.ticket, 1u);
    run_item<T, MMA, NT, KT, NARROW>(p, smem, p.items[cur]);
    __syncthreads();
  }
  // The last block out resets the counters for the next call (graph replays included).
  __shared__ int last;
  if (threadIdx.x == 0) {
    __threadfence();
    last = atomicAdd(p.done, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (last) {
    for (int e = threadIdx.x; e < p.B * p.Q; e += kThreads) {
      p.band_count[e] = 0u;
      p.band_ready[e] = 0u;
    }
    if (threadIdx.x == 0) {
      *p.ticket = 0u;
      *p.done = 0u;
    }
    __threadfence();
  }
}

}  // namespace mtabench::fused
