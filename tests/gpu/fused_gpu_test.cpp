// The fused kernel against the oracle on the GPU: every shipped workload, a randomized property
// test over shapes and dtypes, CUDA-graph replay, and repeated calls. Outcomes come from the
// harness's own gate (run_case with verify_only), the same one `mtabench run` uses.
#include "gpu_test_util.h"
#include "harness/workload.h"
#include "impls/impl.h"

#include <fmt/core.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <cstdio>
#include <random>

namespace mtabench::testing {
namespace {

const RegistryEntry& fused_entry() {
  const RegistryEntry* e = find_impl(builtin_registry(), "fused");
  if (!e) throw std::runtime_error("fused not registered");
  return *e;
}

void expect_passes(const Workload& w, const RunOptions& opt) {
  CaseResult r = run_case(w, fused_entry(), opt, gpu_context(true));
  ASSERT_FALSE(r.context_lost) << r.record["reason"];
  EXPECT_EQ(r.record["outcome"], "passed") << w.shape_string() << ": " << r.record["reason"].get<std::string>();
}

TEST(FusedGpu, EveryShippedWorkload) {
  MTABENCH_REQUIRE_GPU();
  const auto ws = load_workloads(std::string(MTABENCH_SOURCE_DIR) + "/workloads");
  ASSERT_GE(ws.size(), 20u);
  for (const auto& w : ws) {
    // workloads/long-seq.json (2^31 elements and more: ~1 min of the gate's host-side checks
    // each): the paths past 32-bit indexing are fused_indexes_past_32_bits' (label large).
    if (std::find(w.tags.begin(), w.tags.end(), "long-seq") != w.tags.end()) continue;
    SCOPED_TRACE(w.name);
    expect_passes(w, quick_options());
  }
}

TEST(FusedGpu, RandomShapesAgainstTheOracle) {
  MTABENCH_REQUIRE_GPU();
  std::mt19937_64 rng(20261129);
  // Primes and 1 for the edges; multiples of 8 above 256 for the 16-byte vector fill (v3), which
  // only takes seq % 8 == 0.
  const std::int64_t seqs[] = {1, 2, 3, 5, 7, 13, 31, 64, 97, 127, 251, 256, 257, 264, 331, 509, 520, 521, 1031, 1032, 2053};
  const auto impl = fused_entry().make();
  int cases = 0, unsupported = 0;
  while (cases < 220) {
    const int k = 1 + 2 * static_cast<int>(rng() % 6);
    const std::int64_t seq = seqs[rng() % (sizeof seqs / sizeof seqs[0])];
    const std::int64_t hin = 1 + static_cast<std::int64_t>(rng() % 64), hout = 1 + static_cast<std::int64_t>(rng() % 64);
    const std::int64_t batch = 1 + static_cast<std::int64_t>(rng() % 3);
    const DType t = static_cast<DType>(rng() % 3);
    // Keep the whole test to minutes: bound the multiply-adds of one case.
    const double macs = static_cast<double>(batch) * hin * hout * k * k * seq * (seq + 1) / 2.0;
    if (macs > 2e10) continue;
    Workload w = make_workload(k, seq, batch, hin, hout, t);
    w.name = fmt::format("random-{}", cases);
    w.seed = rng();
    // Shapes the implementation declares unsupported are its own statement, not a pass: they
    // are counted and do not count towards the 220.
    if (!impl->check_support(w, &*gpu_context().device).ok) {
      ++unsupported;
      continue;
    }
    SCOPED_TRACE(w.shape_string());
    expect_passes(w, quick_options());
    ++cases;
    if (HasFailure() && cases > 10) break;  // one shape's report is enough to start from
  }
  std::printf("fused: %d random shapes checked against the oracle, %d declared unsupported\n", cases, unsupported);
}

// A directed list of shapes through the gate, each named after its path and shape.
struct Shape {
  int k;
  std::int64_t seq, batch, hin, hout;
  DType t;
};
void expect_shapes_pass(const std::string& path, std::initializer_list<Shape> shapes) {
  for (const Shape& x : shapes) {
    Workload w = make_workload(x.k, x.seq, x.batch, x.hin, x.hout, x.t);
    w.name = path + "-" + w.shape_string();
    SCOPED_TRACE(w.shape_string());
    expect_passes(w, quick_options());
  }
}

// The path every k 3, heads 4/4 workload above seq 256 takes (v3): the four-channel, 16-byte
// vector fill, in its corners -- a padding channel (heads_in 3), 1 to 16 output heads (column
// interleave or n-tiles), every k, rows both before and after the tile columns line up (k 11
// with 1-4 heads out takes the ldmatrix path since v72).
TEST(FusedGpu, FourChannelVectorFill) {
  MTABENCH_REQUIRE_GPU();
  expect_shapes_pass("fill4", {{3, 264, 1, 3, 4, DType::bf16},  {1, 520, 2, 4, 1, DType::fp16},
                               {5, 264, 1, 4, 2, DType::bf16},  {11, 272, 1, 3, 7, DType::fp16},
                               {7, 1032, 1, 4, 16, DType::bf16}, {9, 384, 2, 3, 3, DType::bf16},
                               {3, 2056, 1, 4, 4, DType::fp16}, {3, 512, 3, 3, 9, DType::bf16},
                               {7, 1040, 1, 4, 3, DType::bf16}, {11, 528, 2, 4, 2, DType::fp16}});
}

// The small-seq path's corners: more output heads than threads in a block (fp32 allows any
// heads_out), seq 1 over many batches, every k with one input head; channel groups (v16) that
// do not divide heads_in (4 groups of 5, 8 of 9) and two head groups with 2 columns per lane.
TEST(FusedGpu, SmallPathCorners) {
  MTABENCH_REQUIRE_GPU();
  expect_shapes_pass("small", {{1, 64, 1, 1, 300, DType::fp32}, {3, 1, 700, 2, 3, DType::bf16},
                               {11, 40, 2, 1, 5, DType::fp16},  {5, 256, 3, 2, 9, DType::fp32},
                               {3, 17, 1, 5, 3, DType::bf16},   {7, 33, 2, 13, 6, DType::fp16},
                               {3, 24, 1, 9, 3, DType::fp32},   {3, 9, 300, 4, 4, DType::bf16}});
}

// The row kernel's corners (v164; FusedSmallPlan.RowKernelTakesWhatABlockOfChannelWarpsHolds
// pins that these shapes take it): the seed, seq 1, 2, 5, 17, 31 and 32 (columns past seq in the
// lanes, the first and last rows' missing neighbours), seq 33, 50 and 64 (two columns a lane,
// v166: the taps across the lanes' column groups), seq 97, 100 and 128 (four, v168), 1 to 8
// channels (warps), heads out 1 to 8
// (not multiples of 4: the second head group, heads without weights), every dtype (fp32's sums by
// shuffles), many batches.
TEST(FusedGpu, RowPathCorners) {
  MTABENCH_REQUIRE_GPU();
  expect_shapes_pass("row", {{3, 32, 2, 4, 4, DType::bf16}, {3, 32, 1, 1, 1, DType::fp32},
                             {3, 31, 2, 3, 8, DType::fp16}, {3, 2, 3, 2, 7, DType::bf16},
                             {3, 17, 1, 8, 5, DType::fp32}, {3, 32, 4, 4, 8, DType::fp16},
                             {3, 5, 1, 1, 6, DType::bf16},  {3, 1, 1, 7, 8, DType::fp32},
                             {3, 1, 700, 2, 3, DType::bf16}, {3, 64, 2, 4, 4, DType::bf16},
                             {3, 33, 1, 3, 7, DType::fp16}, {3, 50, 1, 8, 8, DType::fp32},
                             {3, 128, 2, 4, 4, DType::bf16}, {3, 128, 1, 8, 8, DType::fp32},
                             {3, 97, 1, 1, 1, DType::bf16},  {3, 100, 1, 7, 3, DType::fp16}});
}

// The fp32 FMA path's corners (v94): heads out not a multiple of 4 (the shared weights' zero
// heads), more channels than a tile holds (9 > CG 8: a tile per channel group), k 5 and k 7 with
// shared weights (v96: window rows of 12 and 14 columns, the latter with an 8-byte tail), and weights
// too large for shared memory (read from global memory; k 7 too, which then takes the general
// instance). The plan test Fp32WeightsInSharedMemoryUntilTheyDoNotFit checks that these shapes
// take those forms.
TEST(FusedGpu, Fp32PathCorners) {
  MTABENCH_REQUIRE_GPU();
  expect_shapes_pass("fp32", {{3, 300, 1, 4, 6, DType::fp32},
                              {3, 1031, 1, 9, 4, DType::fp32},
                              {5, 264, 2, 3, 4, DType::fp32},   {7, 300, 1, 4, 5, DType::fp32},
                              {11, 40, 1, 32, 32, DType::fp32}, {7, 40, 1, 40, 40, DType::fp32}});
}

// The ldmatrix path's corners (v4; the plan test LdmatrixPathTakesTheseShapes pins which tile
// each gets): 1 head out when the interleave's tile does not fit (v127's half tile, and the
// 16-column one), the 16-column fallback with 16 heads out, 48 channels (six chunks; NT 4's
// wide tile), seq not a multiple of 8 (scalar loads in the vector fill; v130's two-pass wide
// tile), 56 channels at k 7 (NT 2's one-pass wide tile, where two blocks do not fit an SM), 24
// channels at k 5 (the two-pass tile with its weights streamed in chunks).
TEST(FusedGpu, LdmatrixPathCorners) {
  MTABENCH_REQUIRE_GPU();
  expect_shapes_pass("ldsm", {{1, 300, 1, 48, 1, DType::bf16},   {11, 300, 1, 64, 1, DType::fp16},
                              {11, 264, 1, 64, 16, DType::bf16}, {9, 300, 2, 48, 30, DType::fp16},
                              {5, 777, 1, 12, 8, DType::bf16},   {7, 300, 1, 56, 8, DType::bf16},
                              {5, 300, 1, 24, 12, DType::fp16}});
}

// The wgmma instance (sm_90a; the plan test WgmmaPathTakesTheseShapes pins that these shapes take
// it when allowed): k 1 to 11, 16 to 48 channels, 8 to 64 heads out (n-tiles of 2, 4 and 8),
// seq not a multiple of 8, several bands and batches; k 5 and 7 with up to 32 heads out take the
// register-A contraction (v14), every (n-tiles, k) of it here in both dtypes.
TEST(FusedGpu, WgmmaPathCorners) {
  MTABENCH_REQUIRE_GPU();
#ifndef MTABENCH_WGMMA
  GTEST_SKIP() << "built without sm_90a (the wgmma instance is not compiled)";
#else
  expect_shapes_pass("wgmma", {{1, 300, 1, 16, 5, DType::bf16},   {3, 520, 2, 32, 32, DType::fp16},
                               {7, 300, 1, 32, 32, DType::bf16},  {3, 777, 1, 48, 17, DType::bf16},
                               {3, 1000, 1, 32, 64, DType::fp16}, {11, 264, 1, 16, 8, DType::bf16},
                               {5, 301, 2, 16, 12, DType::fp16},  {7, 777, 1, 16, 9, DType::bf16},
                               {5, 520, 2, 32, 24, DType::fp16},  {7, 300, 1, 32, 32, DType::fp16},
                               {5, 264, 1, 16, 16, DType::bf16},  {7, 1000, 2, 16, 10, DType::fp16},
                               {5, 300, 2, 16, 32, DType::bf16}});
#endif
}

// v41's warp-specialised kernel (heads_in 32: two chunk pairs; 48 or 64 do not fit in shared
// memory at k 5 and 7): k 5 and 7, both dtypes, a last band of 8 rows (seq 520, 1032, 1000),
// batch 2, heads out not a multiple of 8.
TEST(FusedGpu, WarpSpecialisedPathCorners) {
  MTABENCH_REQUIRE_GPU();
#ifndef MTABENCH_WGMMA
  GTEST_SKIP() << "built without sm_90a (the wgmma instance is not compiled)";
#else
  expect_shapes_pass("wgmma-ws", {{7, 1024, 1, 32, 32, DType::bf16}, {5, 520, 2, 32, 24, DType::fp16},
                                  {5, 1032, 1, 32, 32, DType::bf16}, {7, 1000, 2, 32, 32, DType::fp16},
                                  {7, 2048, 1, 32, 27, DType::bf16}});
  // Its statistics kernel (v132, any seq): v138's streaming fold for rows past 1024 columns (2056
  // and 4104: the long rows' chunks of 2048 columns and a last one of 8; 2048 above: whole chunks).
  expect_shapes_pass("wgmma-ws-stats", {{5, 2056, 1, 32, 24, DType::fp16}, {5, 4104, 1, 32, 24, DType::bf16}});
#endif
}

// The statistics kernel's folds of 16-bit rows not 16-byte aligned (seq not a multiple of 8;
// the plan test StatisticsKernelFoldShapesTakeTheStatisticsKernel pins that these shapes take that
// kernel, and LeanStatisticsFoldsOnlyForRowsTheyCover which fold): v121's lined fold (B C S S a
// multiple of 8, seq up to 1017: rows at every offset m into their first line, the longest at
// m + seq = 1024) in both dtypes, then the generic fold (B C S S not whole lines; seq 1018).
TEST(FusedGpu, StatisticsKernelFolds) {
  MTABENCH_REQUIRE_GPU();
  expect_shapes_pass("prestats", {{5, 777, 3, 8, 12, DType::bf16}, {3, 1017, 1, 8, 4, DType::fp16},
                                  {3, 521, 2, 4, 4, DType::fp16},  {7, 263, 1, 8, 3, DType::bf16},
                                  {3, 1015, 2, 4, 4, DType::bf16}, {3, 777, 1, 3, 4, DType::bf16},
                                  {3, 1018, 1, 8, 4, DType::fp16}});
}

// The "indexing in 64 bits where products can pass 2^31": one shape a path whose scores
// and y hold just over 2^31 elements (a batch item too, but for the small path: 8200 batches of
// seq 256), so a signed 32-bit product anywhere in the kernels, their plans or the statistics
// kernel wraps. The gate checks them against sampled fp64 oracle rows and the whole of y
// against the GPU reference. ~3-4 minutes on an H200, mostly the gate's host-side checks of 2^31
// elements a case, so DISABLED_ here and run by its own ctest entry, fused_indexes_past_32_bits
// (labels gpu and large: `ctest -L gpu -LE large` leaves it out).
// FusedPlan.SixtyFourBitShapesTakeEachPath pins the paths. An unsigned 32-bit product would wrap
// only past 2^32: at those sizes (seq 32768 few heads and fp32, 16384 ldmatrix and register-A,
// 8192 batch 2 warp-specialised) every path passed `mtabench verify` on an H200 once, by hand
// (JOURNAL.md, fifty-third session), not here, to keep this test to minutes.
TEST(FusedGpu, DISABLED_IndexesPast32Bits) {
  MTABENCH_REQUIRE_GPU();
  expect_shapes_pass("64bit", {{3, 23176, 1, 4, 4, DType::bf16},   // few heads (fill4)
                               {3, 23176, 1, 4, 4, DType::fp32},   // fp32 FMA path
                               {5, 16392, 1, 8, 12, DType::bf16},  // ldmatrix path
                               {5, 11592, 1, 16, 16, DType::fp16}, // register-A wgmma
                               {7, 8200, 1, 32, 32, DType::bf16},  // warp-specialised + statistics kernel
                               {3, 256, 8200, 4, 4, DType::bf16}});  // small path
}

// A workload whose tensors fit the device (fused supports it) but whose gate does not (its GPU
// reference checker needs the fp32 y and probabilities beside them): unsupported, with the
// harness's figures, before anything is allocated (harness/gate.h, gate_memory).
TEST(FusedGpu, GateRefusesAWorkloadItCannotHold) {
  MTABENCH_REQUIRE_GPU();
  const double mem = static_cast<double>(gpu_context().device->memory_bytes);
  // bf16, batch 1, heads 4/4: tensors 16 S^2 bytes (half of 0.9 mem), the gate 48 S^2 (1.35 mem).
  const std::int64_t seq = static_cast<std::int64_t>(std::sqrt(0.9 * mem / 32) / 8) * 8;
  const Workload w = make_workload(3, seq, 1, 4, 4, DType::bf16);
  CaseResult r = run_case(w, fused_entry(), quick_options(), gpu_context());
  ASSERT_FALSE(r.context_lost);
  EXPECT_EQ(r.record["outcome"], "unsupported") << w.shape_string() << ": " << r.record["reason"];
  EXPECT_NE(r.record["reason"].get<std::string>().find("the harness's gate needs"), std::string::npos)
      << r.record["reason"];
}

TEST(FusedGpu, TimedWithGraphReplayStaysCorrect) {
  MTABENCH_REQUIRE_GPU();
  RunOptions opt = quick_options(/*verify_only=*/false);
  opt.timing.graph = true;
  expect_passes(make_workload(3, 520, 2, 4, 4, DType::bf16), opt);  // shared statistics, graph replays
  expect_passes(make_workload(3, 200, 2, 4, 4, DType::fp16), opt);   // local statistics
}

TEST(FusedGpu, TimedRunsStayCorrect) {
  MTABENCH_REQUIRE_GPU();
  expect_passes(make_workload(5, 3000, 1, 6, 10, DType::fp32), quick_options(false));
  expect_passes(make_workload(7, 600, 2, 32, 32, DType::bf16), quick_options(false));
}

}  // namespace
}  // namespace mtabench::testing
