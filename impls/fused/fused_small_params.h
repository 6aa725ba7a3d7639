#pragma once
// Parameters of the fused kernel's small-seq path (fused_small.cuh), planned on the host by
// make_small_plan (fused_plan.cpp).
#include "impls/fused/fused_params.h"  // MTABENCH_FUSED_TIMELINE

namespace mtabench::fused {

constexpr int kSmallThreads = 256;
constexpr int kSmallMaxSeq = 256;  // 8 columns per lane
constexpr int kSmallCols = kSmallMaxSeq / 32;
constexpr int kSmallMaxMacs = 4096;  // multiply-adds per position (heads_in * k * k * heads_out)

struct SmallParams {
  const void* scores;
  const void* weight;
  const void* bias;
  void* y;
  int S, B, C, O, K, r;
  int RB;       // output rows per block
  int O4;       // heads_out rounded up to 4 (zero weights beyond O)
  int SP;       // probability row pitch: S + 2r
  int sm_w, sm_bias, sm_p, sm_total;  // shared memory offsets (bytes)
  int NCOL;     // columns per lane in the row loads: a power of two with 32 NCOL >= S (a template parameter too)
  int G;        // channel groups of the convolution (a power of two <= 8, <= C): adjacent lanes, summed by shuffles
#if MTABENCH_FUSED_TIMELINE
  // Thread 0's %globaltimer stamps, kSmallTimelineWords a block (SmallTimelineWord); diagnostic
  // build only. The C++ and the CUDA files must both see the macro (the timeline scripts pass it
  // in both flag sets): the layout differs without it. (v159 makes it a member always, last.)
  unsigned long long* timeline;
#endif
};

// The small kernel's timeline words a block: entry, its first rows' loads arrived, the
// statistics and probabilities done, the weights staged, the barrier passed, the convolution's
// sums done, exit (after the stores are issued), and the block's SM.
constexpr int kSmallTimelineWords = 8;
enum SmallTimelineWord : int { kStEntry, kStLoads, kStProbs, kStWeights, kStBarrier, kStConv, kStExit, kStSm };

}  // namespace mtabench::fused
