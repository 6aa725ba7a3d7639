#pragma once
// v82: the row statistics as a kernel of their own, launched right before the main kernel where
// the plan says p.prestats (seq <= kPrestatsMaxSeq, fused_plan.h). One warp per (batch, row,
// channel) folds the whole row's causal part [0, i] (NV vectors of eight columns a lane in
// flight at once: one batch for a row of up to 1024 scores) and writes its (max, 1 / sum)
// where the stats items' merge would (stats_index); block 0 raises every band's ready flag. The
// main kernel is launched with programmatic stream serialization: its blocks may start (and do
// their set-up) while this grid runs, and wait in griddepcontrol.wait for its completion before
// they take a ticket (fused_kernel.cuh), which orders every store here before their loads.
// The timeline build stamps each block's entry and exit (tools/fused_timeline.py reports them).
#include "impls/fused/fused_stats.cuh"

namespace mtabench::fused {

constexpr int kPrestatsThreads = 256;

// v85: 16-bit scores fold 4 vectors a lane at a time (a row of up to 1024 in one batch) in at most
// 32 registers, so 8 blocks (64 warps) fit an SM: seq 1024's 8192 warps (batch 2, heads 4) in one
// wave. With 8 vectors the kernel took 64 registers, 4 blocks an SM, and two waves: its blocks
// ran 3.3 us each, the grid 11.1 us (item timeline, twenty-third session). At 32 registers ptxas
// spills each loaded vector right after its load, so a lane's loads go one after another
// (JOURNAL.md v88; candidates/v89 has a fold without spills).
template <class T>
constexpr int kPrestatsBlocksPerSm = sizeof(T) == 2 ? 8 : 4;

template <class T>
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
  if (unit < static_cast<long long>(p.B) * p.C * p.S) {
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
