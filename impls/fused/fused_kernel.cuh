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
#include "impls/fused/fused_params.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace mtabench::fused {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr float kLog2e = 1.4426950408889634f;

// ---- element types -------------------------------------------------------------------------
__device__ __forceinline__ float to_f(float v) { return v; }
__device__ __forceinline__ float to_f(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_f(__nv_bfloat16 v) { return __bfloat162float(v); }
template <class T>
__device__ __forceinline__ T from_f(float v);
template <>
__device__ __forceinline__ float from_f<float>(float v) { return v; }
template <>
__device__ __forceinline__ __half from_f<__half>(float v) { return __float2half_rn(v); }
template <>
__device__ __forceinline__ __nv_bfloat16 from_f<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

__device__ __forceinline__ unsigned bits16(__half v) { return __half_as_ushort(v); }
__device__ __forceinline__ unsigned bits16(__nv_bfloat16 v) { return __bfloat16_as_ushort(v); }

// 2^x, approximate (2 ulp); 2^-inf = +0.
__device__ __forceinline__ float ex2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

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

// Max and sum of 2^(s*log2e - max) over row[c0, c1), one warp. Loads 8 elements per lane per
// step, 16-byte vectors where the row is aligned.
template <class T>
__device__ __forceinline__ void row_stats(const T* row, long long c0, long long c1, float& m, float& l) {
  const int lane = threadIdx.x & 31;
  m = -INFINITY;
  l = 0.f;
  for (long long e = c0 + lane * 8; e < c1; e += 256) {
    float x[8];
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
    float gm = x[0];
#pragma unroll
    for (int q = 1; q < 8; ++q) gm = fmaxf(gm, x[q]);
    float gl = 0.f;
#pragma unroll
    for (int q = 0; q < 8; ++q) gl += ex2(x[q] - gm);
    combine(m, l, gm, gl);
  }
  warp_combine(m, l);
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

// Contraction index kk (over k-rows u, k-columns v, channels c; channels fastest) to its parts.
struct KIndex {
  int u, v, c;
  bool pad;
};
__device__ __forceinline__ KIndex split_k(const FusedParams& p, int kk) {
  KIndex x;
  x.pad = kk >= p.Kreal;
  const int kc = x.pad ? 0 : kk;
  const int uv = kc / p.Cp;
  x.c = kc - uv * p.Cp;
  x.u = uv / p.K;
  x.v = uv - x.u * p.K;
  return x;
}

// Weight element of the contraction: B[kk][n] = weight[n][c][u][v] (0 in the padding).
template <class T>
__device__ __forceinline__ unsigned weight_bits(const FusedParams& p, int kk, int n) {
  const KIndex x = split_k(p, kk);
  if (x.pad || x.c >= p.C || n >= p.O) return 0u;
  const T* w = static_cast<const T*>(p.weight);
  return bits16(w[((static_cast<long long>(n) * p.C + x.c) * p.K + x.u) * p.K + x.v]);
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
template <class T, bool MMA>
__device__ void setup_block(const FusedParams& p, char* smem) {
  float* bias_s = reinterpret_cast<float*>(smem + p.sm_bias);
  const T* bias = static_cast<const T*>(p.bias);
  for (int o = threadIdx.x; o < (p.O + 7) / 8 * 8; o += kThreads) bias_s[o] = o < p.O ? to_f(bias[o]) : 0.f;
  if constexpr (MMA) {
    if (p.w_in_smem) {
      uint2* wf = reinterpret_cast<uint2*>(smem + p.sm_w);
      for (int e = threadIdx.x; e < p.ksteps * p.NT * 32; e += kThreads) {
        const int lane = e & 31, snt = e >> 5;
        wf[e] = weight_fragment<T>(p, snt / p.NT, snt % p.NT, lane);
      }
    }
    // A-fragment word offsets in the probability tile for each k-step and t: the pair
    // (2t, 2t+1) and the pair (2t+8, 2t+9). Padding points at offset 0 (a finite value that
    // meets a zero weight).
    int* koff = reinterpret_cast<int*>(smem + p.sm_koff);
    for (int e = threadIdx.x; e < p.ksteps * 8; e += kThreads) {
      const int s = e >> 3, t = (e >> 1) & 3, h = e & 1;
      const KIndex x = split_k(p, s * 16 + 2 * t + 8 * h);
      koff[e] = x.pad ? 0 : (x.u * p.PW + x.v) * p.pitch_w + (x.c >> 1);
    }
  } else {
    float* ws = reinterpret_cast<float*>(smem + p.sm_w);
    const T* w = static_cast<const T*>(p.weight);
    const int per_o = p.C * p.K * p.K;
    for (int e = threadIdx.x; e < (p.O + 3) / 4 * 4 * per_o; e += kThreads)
      ws[e] = e < p.O * per_o ? to_f(w[e]) : 0.f;
  }
}

// ---- stats item --------------------------------------------------------------------------------
template <class T>
__device__ void stats_item(const FusedParams& p, int b, int q, int chunk, int nch) {
  const T* scores = static_cast<const T*>(p.scores);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const long long i0 = static_cast<long long>(q) * p.R;
  const int rows = static_cast<int>(min(static_cast<long long>(p.R), p.S - i0));
  const long long c0 = static_cast<long long>(chunk) * p.CS;
  for (int pair = warp; pair < rows * p.C; pair += kWarps) {
    const int rr = pair / p.C, c = pair - rr * p.C;
    const long long i = i0 + rr;
    const long long c1 = min(c0 + p.CS, i + 1);
    float m = -INFINITY, l = 0.f;
    if (c0 < c1) row_stats(scores + ((static_cast<long long>(b) * p.C + c) * p.S + i) * p.S, c0, c1, m, l);
    if (lane == 0) p.partials[((static_cast<long long>(b) * p.S + i) * p.C + c) * p.nch_max + chunk] = make_float2(m, l);
  }
  __shared__ int last;
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();  // our partials before the count
    last = atomicAdd(&p.band_count[b * p.Q + q], 1u) == static_cast<unsigned>(nch - 1);
  }
  __syncthreads();
  if (!last) return;
  // The last chunk of the band merges all chunks of its rows.
  __threadfence();
  for (int pair = threadIdx.x; pair < rows * p.C; pair += kThreads) {
    const int rr = pair / p.C, c = pair - rr * p.C;
    const long long i = i0 + rr;
    const float2* part = p.partials + ((static_cast<long long>(b) * p.S + i) * p.C + c) * p.nch_max;
    float m = -INFINITY, l = 0.f;
    for (int j = 0; j < nch; ++j) {
      const float2 v = __ldcg(part + j);  // written by other blocks: bypass L1
      combine(m, l, v.x, v.y);
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
    for (int pair = warp; pair < halo_rows * p.C; pair += kWarps) {
      const int pr = pair / p.C, c = pair - pr * p.C;
      const long long ip = i0 - p.r + pr;
      float m = -INFINITY, l = 0.f;
      if (ip >= 0 && ip < p.S)
        row_stats(scores + ((static_cast<long long>(b) * p.C + c) * p.S + ip) * p.S, 0, ip + 1, m, l);
      if (lane == 0) st[pair] = make_float2(m, l > 0.f ? 1.f / l : 0.f);
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
    for (int pair = threadIdx.x; pair < halo_rows * p.C; pair += kThreads) {
      const int pr = pair / p.C, c = pair - pr * p.C;
      const long long ip = i0 - p.r + pr;
      st[pair] = (ip >= 0 && ip < p.S) ? __ldcg(p.stats + (static_cast<long long>(b) * p.C + c) * p.S + ip)
                                       : make_float2(-INFINITY, 0.f);
    }
  }
  __syncthreads();
}

// Probability of score (ip, jp) of channel c with the row's statistics; 0 outside the causal
// region and outside the tensor (the convolution's zero padding).
template <class T>
__device__ __forceinline__ float prob(const FusedParams& p, const T* plane, const float2* st, int pr, long long ip,
                                      long long jp, int c) {
  if (ip < 0 || ip >= p.S || jp < 0 || jp > ip) return 0.f;
  const float2 s = st[pr * p.C + c];
  return ex2(to_f(plane[ip * p.S + jp]) * kLog2e - s.x) * s.y;
}

// ---- conv item, tensor-core path ---------------------------------------------------------------
template <class T, int WN>
__device__ void conv_item_mma(const FusedParams& p, char* smem, int b, int q, int tile) {
  const long long i0 = static_cast<long long>(q) * p.R, j0 = static_cast<long long>(tile) * p.TJ;
  tile_stats<T>(p, smem, b, i0);
  const float2* st = reinterpret_cast<const float2*>(smem + p.sm_stats);
  const T* scores = static_cast<const T*>(p.scores);
  T* ptile = reinterpret_cast<T*>(smem + p.sm_p);
  const int halo_rows = p.R + 2 * p.r, pitch_h = 2 * p.pitch_w;
  // Probability tile [row][column][channel], channels padded to Cp with zeros. Consecutive
  // threads take consecutive columns of one (row, channel): coalesced reads of the scores. The
  // loads of kBatch elements are issued before any is used, so their L2 latencies overlap.
  const int n_el = halo_rows * p.Cp * p.PW;
  constexpr int kBatch = 8;
  for (int e0 = threadIdx.x; e0 < n_el; e0 += kThreads * kBatch) {
    float raw[kBatch];
    int where[kBatch];
#pragma unroll
    for (int x = 0; x < kBatch; ++x) {
      const int e = e0 + x * kThreads;
      const int pc = e % p.PW, rc = e / p.PW;
      const int c = rc % p.Cp, pr = rc / p.Cp;
      const long long ip = i0 - p.r + pr, jp = j0 - p.r + pc;
      const bool live = e < n_el && c < p.C && ip >= 0 && ip < p.S && jp >= 0 && jp <= ip;
      raw[x] = live ? to_f(scores[((static_cast<long long>(b) * p.C + c) * p.S + ip) * p.S + jp]) : 0.f;
      // Where the value goes, and the statistics row; -1: outside the tile, -2: a zero.
      where[x] = e < n_el ? (live ? e : -2 - e) : -1;
    }
#pragma unroll
    for (int x = 0; x < kBatch; ++x) {
      if (where[x] == -1) continue;
      const bool live = where[x] >= 0;
      const int e = live ? where[x] : -2 - where[x];
      const int pc = e % p.PW, rc = e / p.PW;
      const int c = rc % p.Cp, pr = rc / p.Cp;
      float v = 0.f;
      if (live) {
        const float2 s = st[pr * p.C + c];
        v = ex2(raw[x] * kLog2e - s.x) * s.y;
      }
      ptile[(pr * p.PW + pc) * pitch_h + c] = from_f<T>(v);
    }
  }
  __syncthreads();

  const unsigned* pw = reinterpret_cast<const unsigned*>(ptile);
  const uint2* wf = reinterpret_cast<const uint2*>(smem + p.sm_w);
  const int* koff = reinterpret_cast<const int*>(smem + p.sm_koff);
  const float* bias_s = reinterpret_cast<const float*>(smem + p.sm_bias);
  T* ys = reinterpret_cast<T*>(smem + p.sm_y);
  const int yp = p.TJ + 8;  // staging row pitch (elements)
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const int col_tiles = p.TJ / 16;
  const int m_tiles = p.R * col_tiles, per_warp = m_tiles / kWarps;
  constexpr int WM = 4;
  for (int mg = 0; mg < per_warp; mg += WM) {
    int base0[WM], rho[WM], gam[WM];
#pragma unroll
    for (int wm = 0; wm < WM; ++wm) {
      const int m = warp * per_warp + mg + wm;
      rho[wm] = m / col_tiles;
      gam[wm] = (m - rho[wm] * col_tiles) * 16;
      base0[wm] = (rho[wm] * p.PW + gam[wm] + g) * p.pitch_w;
    }
    for (int ng = 0; ng < p.NT; ng += WN) {
      float acc[WM][WN][4];
#pragma unroll
      for (int wm = 0; wm < WM; ++wm)
#pragma unroll
        for (int wn = 0; wn < WN; ++wn)
#pragma unroll
          for (int x = 0; x < 4; ++x) acc[wm][wn][x] = 0.f;
      for (int s = 0; s < p.ksteps; ++s) {
        const int off0 = koff[s * 8 + t * 2], off1 = koff[s * 8 + t * 2 + 1];
        unsigned a[WM][4];
#pragma unroll
        for (int wm = 0; wm < WM; ++wm) {
          const int b0 = base0[wm], b1 = base0[wm] + 8 * p.pitch_w;
          a[wm][0] = pw[b0 + off0];
          a[wm][1] = pw[b1 + off0];
          a[wm][2] = pw[b0 + off1];
          a[wm][3] = pw[b1 + off1];
        }
#pragma unroll
        for (int wn = 0; wn < WN; ++wn) {
          const int nt = ng + wn;
          if (nt >= p.NT) break;
          const uint2 bf = p.w_in_smem ? wf[(s * p.NT + nt) * 32 + lane] : weight_fragment<T>(p, s, nt, lane);
#pragma unroll
          for (int wm = 0; wm < WM; ++wm) mma16816<T>(acc[wm][wn], a[wm], bf.x, bf.y);
        }
      }
      // Accumulators to the staging tile: bias added, zeros above the diagonal.
#pragma unroll
      for (int wm = 0; wm < WM; ++wm) {
        const long long i = i0 + rho[wm];
#pragma unroll
        for (int wn = 0; wn < WN; ++wn) {
#pragma unroll
          for (int x = 0; x < 4; ++x) {
            const int n = (ng + wn) * 8 + 2 * t + (x & 1);
            const int gcol = gam[wm] + g + (x >= 2 ? 8 : 0);
            if (ng + wn < p.NT && n < p.O) {
              const long long j = j0 + gcol;
              ys[(n * p.R + rho[wm]) * yp + gcol] = from_f<T>(j <= i ? acc[wm][wn][x] + bias_s[n] : 0.f);
            }
          }
        }
      }
    }
  }
  __syncthreads();
  // Staging tile to y: each (head, row) is TJ contiguous elements; 16-byte stores where aligned.
  T* y = static_cast<T*>(p.y);
  const int vecs = p.TJ / 8;
  for (int e = threadIdx.x; e < p.O * p.R * vecs; e += kThreads) {
    const int v = e % vecs, orow = e / vecs;
    const int rr = orow % p.R, o = orow / p.R;
    const long long i = i0 + rr, j = j0 + v * 8;
    if (i >= p.S || j >= p.S) continue;
    T* dst = y + ((static_cast<long long>(b) * p.O + o) * p.S + i) * p.S + j;
    const T* src = ys + (o * p.R + rr) * yp + v * 8;
    if (j + 8 <= p.S && (reinterpret_cast<std::uintptr_t>(dst) & 15) == 0) {
      *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(src);
    } else {
      for (int x = 0; x < 8 && j + x < p.S; ++x) dst[x] = src[x];
    }
  }
  __syncthreads();  // the staging tile and the probability tile are reused by the next item
}

// ---- conv item, fp32 FMA path --------------------------------------------------------------------
// 256 threads = 16 rows x 16 groups of 8 columns (TJ = 128); each thread accumulates 8 columns x
// 4 heads at a time. KT > 0: the kernel width at compile time (registers hold the row window).
template <int KT>
__device__ void conv_item_fma(const FusedParams& p, char* smem, int b, int q, int tile) {
  const long long i0 = static_cast<long long>(q) * p.R, j0 = static_cast<long long>(tile) * p.TJ;
  tile_stats<float>(p, smem, b, i0);
  const float2* st = reinterpret_cast<const float2*>(smem + p.sm_stats);
  const float* scores = static_cast<const float*>(p.scores);
  float* pt = reinterpret_cast<float*>(smem + p.sm_p);
  const int halo_rows = p.R + 2 * p.r, pwp = (p.PW + 3) / 4 * 4;
  // Probability tile [channel][row][column].
  const int n_el = p.C * halo_rows * p.PW;
  for (int e = threadIdx.x; e < n_el; e += kThreads) {
    const int pc = e % p.PW, rc = e / p.PW;
    const int pr = rc % halo_rows, c = rc / halo_rows;
    const long long ip = i0 - p.r + pr, jp = j0 - p.r + pc;
    pt[(c * halo_rows + pr) * pwp + pc] =
        prob(p, scores + (static_cast<long long>(b) * p.C + c) * p.S * p.S, st, pr, ip, jp, c);
  }
  __syncthreads();
  const float* ws = reinterpret_cast<const float*>(smem + p.sm_w);
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
    for (int c = 0; c < p.C; ++c) {
      const float* wc = ws + (oc * p.C + c) * KK;  // weight [oc + oo][c][u][v] at wc[oo*C*KK + u*K + v]
      if constexpr (KT > 0) {
#pragma unroll
        for (int u = 0; u < KT; ++u) {
          const float* row = pt + (c * halo_rows + rho + u) * pwp + g0;
          float win[8 + KT - 1];
#pragma unroll
          for (int x = 0; x < 8 + KT - 1; ++x) win[x] = row[x];
#pragma unroll
          for (int v = 0; v < KT; ++v) {
            float wv[4];
#pragma unroll
            for (int oo = 0; oo < 4; ++oo) wv[oo] = wc[oo * p.C * KK + u * KT + v];
#pragma unroll
            for (int x = 0; x < 8; ++x)
#pragma unroll
              for (int oo = 0; oo < 4; ++oo) acc[x][oo] = fmaf(wv[oo], win[x + v], acc[x][oo]);
          }
        }
      } else {
        for (int u = 0; u < K; ++u) {
          const float* row = pt + (c * halo_rows + rho + u) * pwp + g0;
          for (int v = 0; v < K; ++v) {
            float wv[4];
#pragma unroll
            for (int oo = 0; oo < 4; ++oo) wv[oo] = wc[oo * p.C * KK + u * K + v];
#pragma unroll
            for (int x = 0; x < 8; ++x)
#pragma unroll
              for (int oo = 0; oo < 4; ++oo) acc[x][oo] = fmaf(wv[oo], row[x + v], acc[x][oo]);
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
template <class T>
__device__ void zero_item(const FusedParams& p, int b, int q, int chunk, int lower) {
  const long long i0 = static_cast<long long>(q) * p.R;
  const long long c0 = static_cast<long long>(lower) * p.TJ + static_cast<long long>(chunk) * p.ZC;
  const long long c1 = min(c0 + p.ZC, p.S);
  const int rows = static_cast<int>(min(static_cast<long long>(p.R), p.S - i0));
  constexpr int per_vec = 16 / sizeof(T);
  const long long vecs = (c1 - c0 + per_vec - 1) / per_vec;
  T* y = static_cast<T*>(p.y);
  for (long long e = threadIdx.x; e < static_cast<long long>(p.O) * rows * vecs; e += kThreads) {
    const long long v = e % vecs, orow = e / vecs;
    const int rr = static_cast<int>(orow % rows), o = static_cast<int>(orow / rows);
    const long long j = c0 + v * per_vec;
    T* dst = y + ((static_cast<long long>(b) * p.O + o) * p.S + i0 + rr) * p.S + j;
    if (j + per_vec <= c1 && (reinterpret_cast<std::uintptr_t>(dst) & 15) == 0) {
      *reinterpret_cast<uint4*>(dst) = make_uint4(0, 0, 0, 0);
    } else {
      for (long long x = j; x < min(j + per_vec, c1); ++x) dst[x - j] = from_f<T>(0.f);
    }
  }
}

// ---- the kernel ----------------------------------------------------------------------------------
template <class T, bool MMA, int WN, int KT>
__device__ void run_item(const FusedParams& p, char* smem, int4 it) {
  switch (it.x) {
    case kStatsItem: {
      // Number of chunks of this band: columns up to its last row.
      const long long last = min(static_cast<long long>(it.z + 1) * p.R, p.S);
      stats_item<T>(p, it.y, it.z, it.w, static_cast<int>((last + p.CS - 1) / p.CS));
      break;
    }
    case kConvItem:
      if constexpr (MMA) conv_item_mma<T, WN>(p, smem, it.y, it.z, it.w);
      else conv_item_fma<KT>(p, smem, it.y, it.z, it.w);
      break;
    default: {
      const long long last = min(static_cast<long long>(it.z + 1) * p.R, p.S);
      zero_item<T>(p, it.y, it.z, it.w, static_cast<int>((last + p.TJ - 1) / p.TJ));
      break;
    }
  }
}

template <class T, bool MMA, int WN, int KT>
__global__ void __launch_bounds__(kThreads) fused_kernel(const FusedParams p) {
  extern __shared__ __align__(16) char smem[];
  setup_block<T, MMA>(p, smem);
  __syncthreads();
  if (p.local_stats) {  // no dependencies between items: one item per block
    run_item<T, MMA, WN, KT>(p, smem, p.items[blockIdx.x]);
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
    run_item<T, MMA, WN, KT>(p, smem, p.items[cur]);
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
