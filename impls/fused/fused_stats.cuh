#pragma once
// Row statistics of the fused kernel: the stats items (max and sum of each (row, channel,
// segment), merged per band by the band's last item), the local statistics of small seq, and a
// conv item's wait for and load of its rows' statistics.
#include "impls/fused/fused_common.cuh"

namespace mtabench::fused {

// Row i, channel c's merged statistics in p.stats ([B][S][C], fused_params.h): the one place
// the layout is spelled, for the merge that writes them and tile_stats that reads them.
__device__ __forceinline__ long long stats_index(const FusedParams& p, int b, long long i, int c) {
  return (static_cast<long long>(b) * p.S + i) * p.C + c;
}

// Combines two (max, sum) pairs of the log2-domain softmax without branches (all lanes of a
// shuffle reduction stay converged): -inf marks "no elements", and ex2(-inf) = 0.
__device__ __forceinline__ void combine_nb(float& m, float& l, float m2, float l2) {
  const float mm = fmaxf(m, m2);
  const float s = mm == -INFINITY ? 0.f : mm;
  l = l * ex2(m - s) + l2 * ex2(m2 - s);
  m = mm;
}

// Values of a Vec8 at and past n (0..8) set to -inf, so they drop out of both the max and the
// sum (ex2(-inf) = 0). Only tail vectors take the per-element path.
template <class T>
__device__ __forceinline__ void mask_tail(Vec8<T>& v, int n) {
  if (n >= 8) return;
  T* h = reinterpret_cast<T*>(&v);
#pragma unroll
  for (int q = 0; q < 8; ++q)
    if (q >= n) h[q] = from_f<T>(-INFINITY);
}

// Adds 2^(x log2e - s) for the values of vectors [0, live) of v into four sums (no chain of 8 NV
// dependent adds): fold_vecs' sum, and the streaming statistics kernel's (v139), whose s is the
// lane's running maximum.
template <class T, int NV>
__device__ __forceinline__ void add_ex2_vecs(const Vec8<T> (&v)[NV], int live, float s, float (&l)[4]) {
  if constexpr (sizeof(T) == 2) {  // by 32-bit pairs: one instruction per value to unpack
#pragma unroll
    for (int k = 0; k < NV; ++k)
      if (k < live)
#pragma unroll
        for (int x = 0; x < 4; ++x) {
          const float2 f = unpack2<T>(reinterpret_cast<const unsigned*>(&v[k])[x]);
          l[(2 * x) % 4] += ex2(fmaf(f.x, kLog2e, -s));
          l[(2 * x + 1) % 4] += ex2(fmaf(f.y, kLog2e, -s));
        }
  } else {
#pragma unroll
    for (int k = 0; k < NV; ++k)
      if (k < live)
#pragma unroll
        for (int x = 0; x < 8; ++x) l[x % 4] += ex2(fmaf(reinterpret_cast<const float*>(&v[k])[x], kLog2e, -s));
  }
}

// Max and sum of 2^(x log2e - max) over NV vectors of eight values (tails masked with -inf),
// log2 domain; (-inf, 0) when every value is -inf. v5: the max takes packed 16-bit pairs and
// the sum one FFMA + EX2 + FADD per value (v4 folded one vector per lane and then combined
// across 32 lanes: the shuffle combines cost more than the values, ~25 instructions each).
// v123: `live` (warp-uniform; the statistics kernel's lean folds) leaves the sum of the vectors
// from live on out, where the caller knows them all -inf (their EX2 would add zeros); the max
// still takes every vector.
template <class T, int NV>
__device__ __forceinline__ float2 fold_vecs(const Vec8<T> (&v)[NV], int live = NV) {
  float m;
  if constexpr (sizeof(T) == 2) {
    using T2 = std::conditional_t<std::is_same_v<T, __half>, __half2, __nv_bfloat162>;
    const T2* w = reinterpret_cast<const T2*>(&v[0]);
    T2 mx = w[0];
#pragma unroll
    for (int x = 1; x < 4 * NV; ++x) mx = __hmax2(mx, reinterpret_cast<const T2*>(&v[x / 4])[x % 4]);
    m = fmaxf(to_f(mx.x), to_f(mx.y));
  } else {
    m = -INFINITY;
#pragma unroll
    for (int x = 0; x < 8 * NV; ++x) m = fmaxf(m, reinterpret_cast<const float*>(&v[x / 8])[x % 8]);
  }
  const float s = m == -INFINITY ? 0.f : m * kLog2e;
  float l[4] = {0.f, 0.f, 0.f, 0.f};
  add_ex2_vecs<T, NV>(v, live, s, l);
  return make_float2(m == -INFINITY ? -INFINITY : s, (l[0] + l[1]) + (l[2] + l[3]));
}

// Loads and folds NV vectors of eight columns at e0, e0 + stride, ... of a row whose columns
// end at c1 (exclusive): the piece both statistics paths share. A batch wholly before c1 and
// 16-byte aligned (every batch but a row's last, for seq a multiple of 8) takes plain vector
// loads; only the others test each vector against c1 (v7: those tests, run on every vector,
// were a fifth of the stats items' instructions).
template <class T, int NV>
__device__ __forceinline__ float2 load_fold(const T* row, long long e0, int stride, long long c1) {
  // Columns left from e0, clamped into an int (32-bit arithmetic per vector: registers are tight
  // in the 64-register instance).
  const int rem = static_cast<int>(max(min(c1 - e0, 1ll << 30), -(1ll << 30)));
  const T* src = row + e0;
  Vec8<T> v[NV];
  if (rem >= (NV - 1) * stride + 8 && (reinterpret_cast<std::uintptr_t>(src) & 15) == 0) {
#pragma unroll
    for (int k = 0; k < NV; ++k)
#pragma unroll
      for (int x = 0; x < static_cast<int>(sizeof(Vec8<T>) / 16); ++x)
        v[k].w[x] = reinterpret_cast<const uint4*>(src + k * stride)[x];
  } else {
#pragma unroll
    for (int k = 0; k < NV; ++k) {
      const int n = max(min(rem - k * stride, 8), 0);
      v[k] = n > 0 ? load_vec8(src + k * stride, 0, n) : Vec8<T>{};
      mask_tail(v[k], n);
    }
  }
  return fold_vecs<T, NV>(v);
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

// The (max, sum) of the valid ones among NV vectors of eight columns at e0, e0 + 256, ... of a
// row whose columns end at c1, log2 domain. v84: a vector wholly past c1 is neither loaded nor
// folded (load_fold folds all NV, its masked ones as -inf: at seq 1024 a lane's 64 values
// for its ~16 real ones, 64 ex2 each, which made the statistics kernel ~10 us where its loads
// need ~2; JOURNAL.md v82).
template <class T, int NV>
__device__ __forceinline__ float2 fold_valid(const T* row, long long e0, long long c1) {
  Vec8<T> v[NV];
  int n[NV];
#pragma unroll
  for (int k = 0; k < NV; ++k) {
    const long long e = e0 + 256ll * k;
    n[k] = static_cast<int>(max(min(c1 - e, 8ll), 0ll));
    if (n[k] > 0) {
      v[k] = load_vec8(row + e, e, c1);
      mask_tail(v[k], n[k]);
    }
  }
  // Values as floats: eight a vector (fp32: the vector's two words; 16-bit: four pairs).
  const auto value = [&](int k, int q) {
    if constexpr (sizeof(T) == 4) return reinterpret_cast<const float*>(&v[k])[q];
    else {
      const float2 f = unpack2<T>(reinterpret_cast<const unsigned*>(&v[k])[q / 2]);
      return q % 2 ? f.y : f.x;
    }
  };
  float m = -INFINITY;
#pragma unroll
  for (int k = 0; k < NV; ++k)
    if (n[k] > 0)
#pragma unroll
      for (int q = 0; q < 8; ++q) m = fmaxf(m, value(k, q));
  const float s = m == -INFINITY ? 0.f : m * kLog2e;
  float l0 = 0.f, l1 = 0.f;  // two sums: half the chain of dependent adds
#pragma unroll
  for (int k = 0; k < NV; ++k)
    if (n[k] > 0)
#pragma unroll
      for (int q = 0; q < 8; q += 2) {
        l0 += ex2(fmaf(value(k, q), kLog2e, -s));
        l1 += ex2(fmaf(value(k, q + 1), kLog2e, -s));
      }
  return make_float2(m == -INFINITY ? -INFINITY : s, l0 + l1);
}

// Max and sum of 2^(s*log2e - max) over row[c0, c1), one warp, NV vectors of eight columns a
// lane in flight (local statistics, small seq: 2; v82's statistics kernel, fused_prestats.cuh:
// 4 since v85). Returned by value: v3's reference parameters put them in local memory
// around the call. VALID (v84, the statistics kernel only): fold_valid instead of load_fold;
// in the main kernels' local path it spilled more (few heads 48/56 -> 104/156 bytes).
template <class T, int NV = 2, bool VALID = false>
__device__ __noinline__ float2 row_stats(const T* row, long long c0, long long c1) {
  const int lane = threadIdx.x & 31;
  float m = -INFINITY, l = 0.f;
  for (long long e = c0 + lane * 8; e < c1; e += 256 * NV) {
    const float2 f = VALID ? fold_valid<T, NV>(row, e, c1) : load_fold<T, NV>(row, e, 256, c1);
    combine_nb(m, l, f.x, f.y);
  }
  return reduce_lanes(make_float2(m, l), 32);
}

// ---- stats item --------------------------------------------------------------------------------
// The (row, channel, segment of SEG columns) units of one item (SEG = CS since v7: one unit per
// row and channel of the chunk): L lanes take one unit, each folding batches of NV vectors of
// eight columns (a lane's vectors are 8 L columns apart, so the L lanes read 16 L contiguous
// bytes per vector) into a running (max, sum), then the L lanes combine by shuffles; a warp
// takes steps st = warp, warp + 8, ... of 32 / L units. L is the fewest lanes that still give
// every thread of the block a unit, and at most SEG / (8 NV) (one full batch per lane). All NV
// loads of a batch are in flight before any is used. v5 folded exactly one batch per lane
// (SEG = 256): its unit index arithmetic, shuffle combines and partial stores were more than
// half of the stats items' instructions (seq 4096 profile, v6); a lane now folds SEG / (8 L)
// vectors (four batches at heads_in 4, bf16) for each such overhead.
// NTHR, FIRST: the team that runs it (threads FIRST .. FIRST + NTHR - 1; team_sync).
template <class T, int NV, int NTHR = kThreads, int FIRST = 0>
__device__ void stats_item(const FusedParams& p, int b, int q, int chunk, int nch) {
  const T* scores = static_cast<const T*>(p.scores);
  const int tid = static_cast<int>(threadIdx.x) - FIRST, warp = tid >> 5, lane = tid & 31;
  const long long i0 = static_cast<long long>(q) * p.R;
  const int rows = static_cast<int>(min(static_cast<long long>(p.R), p.S - i0));
  const int spi = p.CS / p.SEG;
  // v55: at least two lanes a unit for 16-bit scores, so each load instruction reads whole 32-byte
  // sectors (a lane's 16 bytes and its neighbour's): with one lane a unit (many heads: R C units
  // for 256 threads) each of a lane's 16-byte loads took half a sector and the next load the other
  // half, twice the sector requests (Nsight Compute, k 7 heads 32: 2.9 M for 1.5 M ideal per load).
  int L = sizeof(T) == 2 && 2 <= p.SEG / (8 * NV) ? 2 : 1;
  while (2 * L <= p.SEG / (8 * NV) && L * p.R * p.C * spi < NTHR) L *= 2;
  const int lshift = __ffs(L) - 1, sshift = __ffs(spi) - 1;
  const int units = rows * p.C * spi, per_step = 32 >> lshift, per_lane = p.SEG / (8 * L);
  const int steps = (units + per_step - 1) >> (5 - lshift);
  const int sub = lane >> lshift, lane_in = lane & (L - 1);
  const long long c0 = static_cast<long long>(chunk) * p.CS;
  #pragma unroll 1
  for (int st = warp; st < steps; st += NTHR / 32) {
    const int unit = st * per_step + sub;
    const int pair = unit >> sshift, seg = unit & (spi - 1);
    const int rr = pair / p.C, c = pair - rr * p.C;
    const long long i = i0 + rr;
    // Columns of this row in the chunk end at c1; a unit past the item's end reads nothing.
    const long long c1 = unit < units ? min(c0 + p.CS, i + 1) : 0;
    const T* row = scores + ((static_cast<long long>(b) * p.C + c) * p.S + i) * p.S;
    const long long e0 = c0 + seg * p.SEG + lane_in * 8;
#if __CUDA_ARCH__ >= 900
    // v73w: in the warp-specialised kernel (its consumers' stats items, FIRST != 0), the unit's
    // whole segment into L2 by one bulk prefetch (no registers held), so that the lanes' batches
    // after the first wait for L2 rather than DRAM. Measured in every instance as v73: k 7
    // heads 32 -1.4%, few heads -0.7..+2.2%, so only here (JOURNAL.md v73).
    if (FIRST != 0 && lane_in == 0 && unit < units) {
      const long long s0 = c0 + seg * p.SEG, s1 = min(s0 + p.SEG, c1);
      const unsigned long long a0 = reinterpret_cast<unsigned long long>(row + s0) & ~15ull;
      const unsigned long long a1 = reinterpret_cast<unsigned long long>(row + s1) & ~15ull;
      if (a1 > a0)
        asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(a0), "r"(static_cast<unsigned>(a1 - a0)) : "memory");
    }
#endif
    float2 ml = make_float2(-INFINITY, 0.f);
    #pragma unroll 1
    for (int k0 = 0; !(kAblate & kAblateStatsLoads) && k0 < per_lane && e0 + 8ll * L * k0 < c1; k0 += NV) {
      const float2 f = load_fold<T, NV>(row, e0 + 8ll * L * k0, 8 * L, c1);
      combine_nb(ml.x, ml.y, f.x, f.y);
    }
    ml = reduce_lanes(ml, L);
    // Row i0 + rr, channel c: partial ((b S + i0) C + pair) nch_max + segment, pair = rr C + c.
    if (lane_in == 0 && unit < units)
      p.partials[((static_cast<long long>(b) * p.S + i0) * p.C + pair) * p.nch_max + chunk * spi + seg] = ml;
  }
  team_sync<NTHR, FIRST>();  // every partial stored before thread 0's fence
  bool last = false;
  if (tid == 0) {
    __threadfence();  // our partials before the count
    last = atomicAdd(&p.band_count[b * p.Q + q], 1u) == static_cast<unsigned>(nch - 1);
  }
  if (!team_any<NTHR, FIRST>(last)) return;
  // The last chunk of the band merges all segments of its rows.
  __threadfence();
  const int nseg = nch * spi;
  #pragma unroll 1
  for (int pair = tid; pair < rows * p.C; pair += NTHR) {
    const int rr = pair / p.C, c = pair - rr * p.C;
    const long long i = i0 + rr;
    const float2* part = p.partials + ((static_cast<long long>(b) * p.S + i) * p.C + c) * p.nch_max;
    float m = -INFINITY, l = 0.f;
    for (int j = 0; j < nseg; ++j) {
      const float2 v = __ldcg(part + j);  // written by other blocks: bypass L1
      combine_nb(m, l, v.x, v.y);
    }
    __stcg(p.stats + stats_index(p, b, i, c), make_float2(m, 1.f / l));
  }
  team_sync<NTHR, FIRST>();
  if (tid == 0) {
    __threadfence();
    atomicExch(&p.band_ready[b * p.Q + q], 1u);
  }
}

// A ready flag read without ordering (ld.relaxed: no CCTL.IVALL behind it, so several are in
// flight at once); acquire_fence() after the polls that saw the flags set pairs with each
// writer's fence and atomicExch (a release), so this thread's later loads of the statistics see
// them. v44: v10's per-pair ld.acquire put a CCTL.IVALL behind every poll, which waits for the
// poll's round trip, then the statistics load was another: two dependent L2 round trips a pair,
// 5.5 pairs a producer thread at k 7 heads 32 (~20% of the producer's samples, v42's profile).
__device__ __forceinline__ unsigned load_relaxed(const unsigned* flag) {
  unsigned v;
  asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(flag) : "memory");
  return v;
}
__device__ __forceinline__ void acquire_fence() { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }
// One pair a thread (K = 1) keeps v10's acquire poll per pair: the same two round trips, and the
// 64-register few-heads instance spilled 12 bytes more with the relaxed polls.
__device__ __forceinline__ unsigned load_acquire(const unsigned* flag) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(flag) : "memory");
  return v;
}

// ---- conv item: statistics of the tile's rows ----------------------------------------------------
// The statistics of the tile's halo rows in shared memory. MBW = 0: (max, 1 / sum) per (row,
// channel), float2 [row][C]. Otherwise max + log2(sum) per (row, channel), floats [row][ns] with
// ns = MBW (4: the four-channel fill, v21) or Cp (MBW = -1: the eight-channel fill, v24), 0 for
// a channel >= C (its raw scores are 0, so its probability is 1 and meets a zero weight); once
// per row and channel here instead of once per fill task (each of a row's vectors took four
// log2s: v20's fill).
// BAR: the team's barrier at the end (v151: the warp-specialised producer's 256 threads are a
// team of kThreads that is not the block, so they name barrier 1).
template <class T, int MBW = 0, int NTHR = kThreads, int K = 1, int BAR = kTeamBarrier<NTHR, 0>>
__device__ void tile_stats(const FusedParams& p, char* smem, int b, long long i0) {
  constexpr bool MB = MBW != 0;
  float2* st = reinterpret_cast<float2*>(smem + p.sm_stats);
  float* mb = reinterpret_cast<float*>(smem + p.sm_stats);
  const int halo_rows = p.R + 2 * p.r, ns = MBW > 0 ? MBW : p.Cp;
  if (p.local_stats) {
    const T* scores = static_cast<const T*>(p.scores);
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    if (MB && p.C < ns)
      for (int e = threadIdx.x; e < halo_rows * (ns - p.C); e += NTHR)
        mb[e / (ns - p.C) * ns + p.C + e % (ns - p.C)] = 0.f;
    #pragma unroll 1
    for (int pair = warp; pair < halo_rows * p.C; pair += NTHR / 32) {
      const int pr = pair / p.C, c = pair - pr * p.C;
      const long long ip = i0 - p.r + pr;
      float2 ml = make_float2(-INFINITY, 0.f);
      if (ip >= 0 && ip < p.S) ml = row_stats(scores + ((static_cast<long long>(b) * p.C + c) * p.S + ip) * p.S, 0, ip + 1);
      if (lane == 0) {
        if (MB) mb[pr * ns + c] = ml.y > 0.f ? ml.x + lg2(ml.y) : 0.f;
        else st[pair] = make_float2(ml.x, ml.y > 0.f ? 1.f / ml.y : 0.f);
      }
    }
  } else {
    // Rows i0 - r .. i0 + R + r - 1 lie in bands q - 1, q, q + 1 (r <= R). K = 1 (v10): each
    // (row, channel) thread waits for its own row's band and loads at once (one thread polled the
    // three flags one after another, then a fence and a barrier, before any statistics load: four
    // dependent round trips with the block idle). K > 1 (v44), for several pairs a thread: every
    // thread polls the tile's bands, all three in flight at once, then loads its pairs'
    // statistics K at a time, all in flight before any is used.
    const int q = static_cast<int>(i0 / p.R);
    const unsigned* ready = p.band_ready + b * p.Q + q;
    const int nc = MB ? ns : p.C, total = halo_rows * nc;
    const auto put = [&](int pair, float2 v) {
      if (MB) mb[pair] = v.y > 0.f ? v.x - lg2(v.y) : 0.f;  // 1 / sum >= 1 / seq: never denormal
      else st[pair] = v;
    };
    if constexpr (K == 1) {
      #pragma unroll 1
      for (int pair = threadIdx.x; pair < total; pair += NTHR) {
        const int pr = pair / nc, c = pair - pr * nc;
        const long long ip = i0 - p.r + pr;
        float2 v = make_float2(-INFINITY, 0.f);
        if (ip >= 0 && ip < p.S && (!MB || c < p.C)) {
          const unsigned* flag = ready + (pr < p.r ? -1 : pr >= p.R + p.r ? 1 : 0);
          while (load_acquire(flag) == 0u) __nanosleep(100);
          v = __ldcg(p.stats + stats_index(p, b, ip, c));
        }
        put(pair, v);
      }
    } else {
      const bool lo = p.r > 0 && q > 0, hi = p.r > 0 && i0 + p.R < p.S;
      for (;;) {
        const unsigned f0 = lo ? load_relaxed(ready - 1) : 1u, f1 = load_relaxed(ready), f2 = hi ? load_relaxed(ready + 1) : 1u;
        if (f0 && f1 && f2) break;
        __nanosleep(100);
      }
      acquire_fence();
      #pragma unroll 1
      for (int base = threadIdx.x; base < total; base += K * NTHR) {
        float2 v[K];
#pragma unroll
        for (int k = 0; k < K; ++k) {
          const int pair = base + k * NTHR;
          v[k] = make_float2(-INFINITY, 0.f);
          const int pr = pair / nc, c = pair - pr * nc;
          const long long ip = i0 - p.r + pr;
          if (pair < total && ip >= 0 && ip < p.S && (!MB || c < p.C))
            v[k] = __ldcg(p.stats + stats_index(p, b, ip, c));
        }
#pragma unroll
        for (int k = 0; k < K; ++k) {
          const int pair = base + k * NTHR;
          if (pair >= total) break;
          put(pair, v[k]);
        }
      }
    }
  }
  bar_sync<BAR, NTHR>();
}

}  // namespace mtabench::fused
