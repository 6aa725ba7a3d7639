#pragma once
// Host-side planning of the fused kernel for one workload: tiling, shared-memory layout, scratch
// sizes and the work-item order. Pure host code (unit-testable without a GPU).
#include "harness/workload.h"
#include "impls/fused/fused_params.h"
#include "impls/fused/fused_small_params.h"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

namespace mtabench::fused {

struct FusedPlan {
  FusedParams p{};           // tensor and scratch pointers are filled in at initialize/run
  std::vector<int4> items;
  bool mma = false;          // tensor cores (bf16/fp16) or fp32 FMA
  int KT = 0;                // compile-time kernel width for the FMA path (3, 5, 7; 0 = any)
  std::size_t partials_bytes = 0, stats_bytes = 0, counter_words = 0;
  std::string why_not;       // non-empty: the workload cannot run (shared memory, sizes)
  std::string describe() const;
};

// `window`: how many blocks run at once (the grid); statistics are ordered at least
// lead_windows times that many items ahead of the first tile that waits for them (4: v4; 2
// measured the same, 1 slower, JOURNAL.md v11). `wgmma_ok`: the device and the binary can run
// the sm_90a wgmma instance (fused_wgmma.cuh).
constexpr int kPlanWindow = 264, kLeadWindows = 4;
// v72t: kPlanWindow was tuned (v38) where the interleave instance ran 4 blocks an SM; since v72 it
// runs 8 (bands of kFewRows), so its tiles narrow until they make twice as many conv items.
constexpr int kFewPlanWindow = 2 * kPlanWindow;
// v82: up to this seq the row statistics are a kernel of their own ahead of the main one (p.prestats).
constexpr long long kPrestatsMaxSeq = 1024;
// v85r: the few-heads tensor-core instance (the column interleave) only up to this seq: a single
// wave of items there (seq 512 -6.8%); at seq 1000-1024 it lost 17-18% (JOURNAL.md v85), with
// a fold whose loads went one round trip after another (spills at 32 registers, v88). v89: with
// the lean fold (row_stats_lines), up to 1024 again.
constexpr long long kPrestatsFewHeadsMaxSeq = 1024;
// v89: the 16-bit statistics kernel's lean fold (row_stats_lines, fused_prestats.cuh) loads
// four vectors of eight scores a lane, so it covers rows of up to this many scores; it also needs
// 16-byte aligned rows (seq a multiple of 8, an aligned base) and a 32-bit row index.
constexpr int kPrestatsAlignedMaxRow = 4 * 8 * 32;
// Which fold a launch's statistics kernel takes (16-bit scores; fp32 always the generic one):
// aligned (v89), the lean fold of 16-byte aligned rows of up to kPrestatsAlignedMaxRow scores;
// lined (v121), the same fold over the 16-byte lines that hold rows not 16-byte aligned (seq not a
// multiple of 8), masked at both ends, where every such line lies inside the scores tensor and
// m + seq <= kPrestatsAlignedMaxRow for the rows' offsets m < 8 into their first line; generic,
// any row; stream (v138), rows past 1024, 16-byte aligned (fused_prestats_stream.cuh). A
// probe with the few-heads bound at 2048 (JOURNAL.md v89) took the lean fold past its 1024
// columns, without the length check, and failed the oracle (relative L2 error 0.34).
PrestatsFold prestats_fold(const FusedParams& p);
FusedPlan make_plan(const Workload& w, int smem_optin_bytes, int window = kPlanWindow,
                    int lead_windows = kLeadWindows, bool wgmma_ok = false);

// The kernels' static shared memory (a few __shared__ words: ptxas reports 32-48 bytes) comes
// out of the same per-block opt-in as the plan's dynamic bytes, so the plans get the opt-in less
// this reserve, and prepare_kernel / prepare_small_kernel refuse an instance with more.
constexpr int kStaticSmemReserve = 256;
inline int dynamic_smem_budget(std::int64_t smem_per_block_optin) {
  return static_cast<int>(smem_per_block_optin) - kStaticSmemReserve;
}

// The small-seq path (fused_small.cuh): used when why_not is empty.
struct SmallPlan {
  SmallParams p{};
  int grid = 0;
  int KT = 0;  // compile-time kernel width (3), 0 = any
  // v164: the row kernel (fused_row.cuh, a warp a channel) instead of the small kernel: seq <=
  // kRowMaxSeq, k 3, heads_in <= kRowMaxC, heads_out <= kRowMaxO, one row a block in this plan.
  bool row = false;
  int threads = kSmallThreads;  // a block's
  std::string why_not;
};
SmallPlan make_small_plan(const Workload& w, int smem_optin, int sm_count);

// Stats chunks, lower tiles and zero chunks of band q (rows [qR, qR+R) of one batch).
int stats_chunks(const FusedParams& p, int q);
int lower_tiles(const FusedParams& p, int q);
int zero_chunks(const FusedParams& p, int q);

}  // namespace mtabench::fused
