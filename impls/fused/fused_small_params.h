#pragma once
// Parameters of the fused kernel's small-seq path (fused_small.cuh), planned on the host by
// make_small_plan (fused_plan.cpp).
#include "impls/fused/fused_params.h"  // MTABENCH_FUSED_TIMELINE

namespace mtabench::fused {

constexpr int kSmallThreads = 256;
constexpr int kSmallMaxSeq = 256;  // 8 columns per lane
constexpr int kSmallCols = kSmallMaxSeq / 32;
// Bytes of weights a staging thread holds from the kernel's start (v160): 4 bf16/fp16 elements or
// 2 fp32 (4 fp32 made ptxas spill the fp32 general-k instance at seq 65-128).
constexpr int kSmallWeightBytes = 8;
constexpr int kSmallMaxMacs = 4096;  // multiply-adds per position (heads_in * k * k * heads_out)
// v164: the row path (fused_row.cuh): a block an output row and a warp a channel, seq <=
// kRowMaxSeq (a lane NCOL columns: 32 until v166, 64 until v168), k 3, at most kRowMaxC
// channels and kRowMaxO heads out; a lane holds kRowWeightRegs elements of its channel's
// weights (9 kRowMaxO) from the kernel's start.
constexpr int kRowMaxSeq = 128;
constexpr int kRowMaxC = 8;
constexpr int kRowMaxO = 8;
constexpr int kRowWeightRegs = (9 * kRowMaxO + 31) / 32;

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
  // v159: the kernel's divisions by plan constants as multiplications (small_div): the block's
  // batch (blockIdx / QB, QB = ceil(S / RB)), a pair's channel (pair / halo), a task's head group
  // (rest / (RB S)) and row (e / S). Each was an integer division of ~20 dependent instructions,
  // two before the rows' loads could issue and two after the barrier.
  int QB;
  // The weights' staging (source element / (C k^2)) likewise.
  unsigned long long qb_magic, halo_magic, pos_magic, s_magic, ckk_magic;
  // Thread 0's %globaltimer stamps, kSmallTimelineWords a block (SmallTimelineWord), in the
  // diagnostic build (MTABENCH_FUSED_TIMELINE) only; null otherwise. A member always, last, so
  // that a C++ file and a CUDA file built with different flags still agree on the layout.
  unsigned long long* timeline;
};

// n / d for 0 <= n < 2^31 and 1 <= d < 2^31 by multiplication: the magic is m = ceil(2^63 / d)
// (2^63 for d = 1: no special case), and the quotient the high 64 bits of (2n) m, from two 32 x
// 32 -> 64 multiplies (v160; v159's 64 x 64 high multiply of a sign-extended n took four and a
// branch for d = 1). Exact: m d = 2^63 + e with e < d, so (2n) m / 2^64 = n / d + n e / (d 2^63),
// and n e < 2^62 keeps the excess under 1 / d. FusedSmallPlan.MagicDivisionIsExact checks it.
inline unsigned long long small_magic(int d) { return ((1ull << 63) - 1) / static_cast<unsigned long long>(d) + 1; }
#ifdef __CUDACC__
__host__ __device__
#endif
inline int small_div(int n, unsigned long long magic) {
  const unsigned long long x = static_cast<unsigned>(n) << 1;  // < 2^32
  const unsigned long long lo = x * static_cast<unsigned>(magic);
  return static_cast<int>((x * static_cast<unsigned>(magic >> 32) + (lo >> 32)) >> 32);
}

// v162: the rows' reductions by redux.sync (integers only on sm_90). The maximum: a float's bits
// as an int whose signed order is the float's (a negative float's low 31 bits flipped; its own
// inverse). The sum of a lane's NCOL exponentials (each in [0, 1]) in fixed point with
// small_sum_bits(NCOL) fraction bits: a lane's term <= 2^26, the warp's sum <= 2^31 fits an
// unsigned; rounding each term costs at most 2^-(bits+1), the sum at most 2^(4-bits) <= 2^-19
// against a row sum of at least 1 (16-bit types only: their gate allows 1e-2; fp32 keeps its
// shuffles).
#ifdef __CUDACC__
__host__ __device__
#endif
inline int ordered_key(int bits) { return bits ^ ((bits >> 31) & 0x7fffffff); }
#ifdef __CUDACC__
__host__ __device__
#endif
constexpr int small_sum_bits(int ncol) { return ncol >= 8 ? 23 : ncol >= 4 ? 24 : ncol >= 2 ? 25 : 26; }

// The small kernel's timeline words a block: entry, its first rows' loads arrived, the
// statistics and probabilities done, the weights staged, the barrier passed, the convolution's
// sums done, exit (after the stores are issued), and the block's SM.
constexpr int kSmallTimelineWords = 8;
enum SmallTimelineWord : int { kStEntry, kStLoads, kStProbs, kStWeights, kStBarrier, kStConv, kStExit, kStSm };

}  // namespace mtabench::fused
