#pragma once
// v82: the row statistics as a kernel of their own, launched right before the main kernel where
// the plan says p.prestats (seq <= kPrestatsMaxSeq, fused_plan.h; since v132/v139 also the
// warp-specialised kernel's at any seq, its rows past 1024 by fused_prestats_stream.cuh). One
// warp per (batch, row, channel) folds the whole row's causal part [0, i] (NV vectors of eight columns a lane in
// flight at once: one batch for a row of up to 1024 scores) and writes its (max, 1 / sum)
// where the stats items' merge would (stats_index); block 0 raises every band's ready flag. The
// main kernel is launched with programmatic stream serialization: its blocks may start (and do
// their set-up) while this grid runs, and wait in griddepcontrol.wait for its completion before
// they take a ticket (fused_kernel.cuh), which orders every store here before their loads.
// The timeline build stamps each block's entry and exit (tools/fused_timeline.py reports them).
#include "impls/fused/fused_plan.h"
#include "impls/fused/fused_stats.cuh"

#include <type_traits>

namespace mtabench::fused {

constexpr int kPrestatsThreads = 256;

// v85: 16-bit scores fold 4 vectors a lane at a time (a row of up to 1024 in one batch) in at most
// 32 registers, so 8 blocks (64 warps) fit an SM: seq 1024's 8192 warps (batch 2, heads 4) in one
// wave. With 8 vectors the kernel took 64 registers, 4 blocks an SM, and two waves: its blocks
// ran 3.3 us each, the grid 11.1 us (item timeline, twenty-third session). At 32 registers ptxas
// spills each loaded vector right after its load, so a lane's loads go one after another
// (JOURNAL.md v88): the generic fold still does; v89's lean fold (row_stats_lines) does not.
template <class T>
constexpr int kPrestatsBlocksPerSm = sizeof(T) == 2 ? 8 : 4;

// v89: a whole causal row of up to 1024 16-bit scores, where the rows are 16-byte aligned (seq a
// multiple of 8 and an aligned base): every vector that starts before the row's end is loaded
// whole (its columns past the end are still the row's storage) and masked with -inf (mask_tail)
// afterwards, so the four loads need no scalar path. v88 showed why (JOURNAL.md): through
// row_stats at 32 registers, ptxas spilled each loaded vector right after its load, which waits
// for it, so a lane's four loads went one round trip after another. v92: the masking is
// mask_tail's, behind a branch on the column count: v89 masked by words with predicated
// instructions between the loads, and a predicated-off instruction still waits for its operands'
// loads, so the fourth load (rows past 768) went out only after the first three had arrived
// (seq 1000-1024 -6.5..-7.4% with the branch, JOURNAL.md v92).
// v121, LINED: a row that starts m > 0 scores into a 16-byte line (seq not a multiple of 8) is
// read the same way from that line's start, `lines` = row - m, over m + len columns, and the m
// scores before the row (the row before it, or nothing the plan admits past the tensor: see
// prestats_fold) are masked in lane 0's first vector after all four loads are out. Before it
// such rows took row_stats' generic fold: two-byte loads, spilled at 32 registers (k 5 heads 8/12
// at seq 777: 25 us for 14.5 MB of scores, JOURNAL.md v119).
template <class T>
__device__ __forceinline__ void mask_head(Vec8<T>& v, int m) {
  T* h = reinterpret_cast<T*>(&v);
#pragma unroll
  for (int q = 0; q < 7; ++q)
    if (q < m) h[q] = from_f<T>(-INFINITY);
}

template <class T, bool LINED>
__device__ __forceinline__ float2 row_stats_lines(const T* lines, int m, int len) {
  static_assert(sizeof(T) == 2, "16-bit scores only");
  static_assert(kPrestatsAlignedMaxRow == 4 * 256, "four vectors a lane cover the rows prestats_fold admits");
  const int lane = threadIdx.x & 31;
  const int end = LINED ? m + len : len;  // the row's end, in columns from `lines`
  Vec8<T> v[4];
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const int n = end - (lane * 8 + 256 * k);  // this vector's columns before the row's end
    v[k].w[0] = n > 0 ? *reinterpret_cast<const uint4*>(lines + lane * 8 + 256 * k) : make_uint4(0u, 0u, 0u, 0u);
    mask_tail(v[k], n);  // n <= 0: the whole (zeroed) vector becomes -inf
  }
  if (LINED && lane == 0 && m > 0) mask_head(v[0], m);
  // v123: only the vectors some lane's columns reach are summed (fold_vecs' live; the rest are
  // all -inf): at seq 777 ~19 M EX2 a launch had been ~5 us of the SMs' MUFU, half of them zeros.
  return reduce_lanes(fold_vecs<T, 4>(v, (end + 255) >> 8), 32);
}

// FOLD (prestats_fold, fused_plan.cpp; 16-bit only): aligned (v89), rows 16-byte aligned of up
// to 1024 scores; lined (v121), rows not aligned, read by whole lines: both take
// row_stats_lines, each an instance of its own, so that the generic path's call (and the spills
// around it) is not in their code.
template <class T, PrestatsFold FOLD = PrestatsFold::generic>
__global__ void __launch_bounds__(kPrestatsThreads, kPrestatsBlocksPerSm<T>) fused_prestats_kernel(const FusedParams p) {
#if __CUDA_ARCH__ >= 900
  // Let the main kernel's blocks launch now: they need this grid only after their set-up.
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
  // fp32 vectors are 32 bytes (8 registers).
  constexpr int NV = 4;
#if MTABENCH_FUSED_TIMELINE
  if (threadIdx.x == 0 && p.timeline_prestats) p.timeline_prestats[2 * blockIdx.x] = globaltimer_ns();
#endif
  const long long unit = (static_cast<long long>(blockIdx.x) * kPrestatsThreads + threadIdx.x) >> 5;
  const int lane = threadIdx.x & 31;
  if (blockIdx.x == 0)
    for (int e = threadIdx.x; e < p.B * p.Q; e += kPrestatsThreads) p.band_ready[e] = 1u;
  if constexpr ((FOLD == PrestatsFold::aligned || FOLD == PrestatsFold::lined) && sizeof(T) == 2) {
    // 32-bit decode (prestats_fold: B C S < 2^31): 64-bit divisions are calls whose saved
    // registers spilled; the store's address is formed before the fold, two registers across it.
    constexpr bool kLined = FOLD == PrestatsFold::lined;
    const unsigned u = static_cast<unsigned>(unit), S = static_cast<unsigned>(p.S);
    if (u < static_cast<unsigned>(p.B) * p.C * S) {
      const unsigned i = S - 1 - u % S, bc = u / S;
      // The row's offset into its line: its first score's index mod 8 (the base is aligned), from
      // the index's low 32 bits.
      const int m = kLined ? static_cast<int>(((bc * S + i) * S) & 7u) : 0;
      const T* row = static_cast<const T*>(p.scores) + (static_cast<long long>(bc) * S + i) * S;
      float2* dst = p.stats + stats_index(p, static_cast<int>(bc / p.C), i, static_cast<int>(bc % p.C));
      const float2 ml = row_stats_lines<T, kLined>(row - m, m, static_cast<int>(i) + 1);
      if (lane == 0) *dst = make_float2(ml.x, 1.f / ml.y);
    }
  } else if (unit < static_cast<long long>(p.B) * p.C * p.S) {
    // unit -> (b, c, i), rows from the last: the long rows first, the short ones fill the end.
    const long long i = p.S - 1 - unit % p.S;
    const long long bc = unit / p.S;
    const int c = static_cast<int>(bc % p.C), b = static_cast<int>(bc / p.C);
    const float2 ml = row_stats<T, NV, true>(static_cast<const T*>(p.scores) + (bc * p.S + i) * p.S, 0, i + 1);
    if (lane == 0) p.stats[stats_index(p, b, i, c)] = make_float2(ml.x, 1.f / ml.y);
  }
#if MTABENCH_FUSED_TIMELINE
  __syncthreads();  // the block's exit: all of its warps done
  if (threadIdx.x == 0 && p.timeline_prestats) p.timeline_prestats[2 * blockIdx.x + 1] = globaltimer_ns();
#endif
}

}  // namespace mtabench::fused
