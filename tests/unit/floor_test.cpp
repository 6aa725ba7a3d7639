// Roofline floors (issue 5, SPEC §5, harness/floor.h): the leaderboard page's figures pinned
// (headroom-v1 for the seed workload on an RTX 3090, with and without y), headroom-v2's bytes,
// FLOPs and exps worked out here from SPEC §5's formulas, the issue's GFLOP figures, and the
// datasheet table (every GPU the issue names, found by id and by name, each with a source).
#include "harness/floor.h"
#include "tests/test_workload.h"

#include <gtest/gtest.h>

#include <cmath>
#include <iterator>
#include <set>
#include <string>

namespace mtabench {
namespace {

// The shared test workload builder, under this file's short name.
constexpr auto make = &testing::make_workload;

Ceilings bandwidth_only(double bytes_per_s) {
  Ceilings c;
  c.kind = "test";
  c.mem_bytes_per_s = bytes_per_s;
  c.math_flops = 1e30;
  c.exp_per_s = 1e30;
  return c;
}

const FloorTerm* term(const Floor& f, const std::string& name) {
  for (const auto& t : f.terms)
    if (t.name == name) return &t;
  return nullptr;
}

// ---------------------------------------------------------------------------------------------
// headroom-v1: the leaderboard page's rule

TEST(FloorV1, SeedOnRtx3090Is33064BytesAnd35_3ns) {
  const Workload seed = make(3, 32, 2, 4, 4, DType::bf16);
  // scores 2*4*32*32 + y 2*4*32*32 + weight 4*4*3*3 + bias 4 = 16,532 elements of 2 bytes.
  EXPECT_EQ(bytes_v1(seed), 33064.0);
  const Datasheet* d = find_datasheet("rtx-3090");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->mem_bytes_per_s, 936e9);
  const Floor f = headroom_v1(seed, datasheet_ceilings(*d, DType::bf16, false));
  EXPECT_EQ(f.model, "headroom-v1");
  EXPECT_EQ(f.bound_by, "memory");
  ASSERT_EQ(f.terms.size(), 1u);  // no arithmetic term
  EXPECT_NEAR(f.seconds * 1e9, 35.3, 0.05);
  EXPECT_DOUBLE_EQ(f.seconds, 33064.0 / 936e9);
}

TEST(FloorV1, ThePagesEighteenNanosecondsLeaveOutY) {
  const Workload seed = make(3, 32, 2, 4, 4, DType::bf16);
  const double y_bytes = static_cast<double>(seed.y_elems()) * 2;
  EXPECT_EQ(y_bytes, 16384.0);
  const double without_y = bytes_v1(seed) - y_bytes;
  EXPECT_EQ(without_y, 16680.0);
  EXPECT_NEAR(without_y / 936e9 * 1e9, 17.8, 0.05);  // the page rounds to 18 ns
  EXPECT_EQ(std::lround(without_y / 936e9 * 1e9), 18);
}

TEST(FloorV1, ScalesWithDtypeSize) {
  const Workload bf = make(3, 32, 2, 4, 4, DType::bf16), fp = make(3, 32, 2, 4, 4, DType::fp32);
  EXPECT_EQ(bytes_v1(fp), 2 * bytes_v1(bf));
}

// ---------------------------------------------------------------------------------------------
// headroom-v2, by hand: k 3, seq 4096, batch 2, heads 4/4, bf16
//   causal elements per plane  4096 * 4097 / 2                = 8,390,656
//   scores (lower triangle)    2 * 4 * 8,390,656              = 67,125,248 elements
//   y (all of it)              2 * 4 * 4096 * 4096            = 134,217,728
//   weight + bias              4 * 4 * 9 + 4                  = 148
//   bytes                      (67,125,248 + 134,217,728 + 148) * 2 = 402,686,248
//   FLOPs                      2 * heads_in * k^2 * batch * heads_out * causal
//                              = 2 * 4 * 9 * 2 * 4 * 8,390,656 = 4,833,017,856
//   exps                       one per score read = 67,125,248

TEST(FloorV2, Seq4096ByHand) {
  const Workload w = make(3, 4096, 2, 4, 4, DType::bf16);
  EXPECT_EQ(w.causal_elems_per_plane(), 8390656);
  EXPECT_EQ(bytes_v2(w), 402686248.0);
  EXPECT_EQ(flops_v2(w), 4833017856.0);
  EXPECT_EQ(exps_v2(w), 67125248.0);
  // At the 4.25 TB/s the anchor table's device copy reached: 94.7 us (SPEC §8 prints 94.8).
  const Floor f = headroom_v2(w, bandwidth_only(4.25e12));
  EXPECT_EQ(f.bound_by, "memory");
  EXPECT_NEAR(f.seconds * 1e6, 94.75, 0.01);
  ASSERT_NE(term(f, "memory"), nullptr);
  EXPECT_EQ(term(f, "memory")->amount, 402686248.0);
}

TEST(FloorV2, SeedWorkloadByHand) {
  const Workload w = make(3, 32, 2, 4, 4, DType::bf16);
  // causal 528; scores 8 * 528 = 4224; y 8192; weight+bias 148 -> 12,564 elements, 25,128 bytes.
  EXPECT_EQ(bytes_v2(w), 25128.0);
  EXPECT_EQ(flops_v2(w), 2.0 * 4 * 9 * 8 * 528);
  EXPECT_EQ(exps_v2(w), 4224.0);
  EXPECT_LT(bytes_v2(w), bytes_v1(w));  // the causal scores are fewer than all scores
}

TEST(FloorV2, TheIssuesGflopFigures) {
  // k 7, heads 32/32, batch 1, seq 4096: 2 * 32 * 49 * 32 * 8,390,656 = 842,021,... FLOPs.
  const Workload a = make(7, 4096, 1, 32, 32, DType::bf16);
  EXPECT_EQ(flops_v2(a), 2.0 * 32 * 49 * 32 * 8390656.0);
  EXPECT_NEAR(flops_v2(a) / 1e9, 842.0, 0.5);
  // k 5, heads 16/16, batch 4, seq 2048: 2 * 16 * 25 * 4 * 16 * 2048 * 2049 / 2.
  const Workload b = make(5, 2048, 4, 16, 16, DType::bf16);
  EXPECT_EQ(flops_v2(b), 2.0 * 16 * 25 * 4 * 16 * (2048.0 * 2049 / 2));
  EXPECT_NEAR(flops_v2(b) / 1e9, 107.4, 0.05);
}

TEST(FloorV2, LargestTermBoundsAndLaunchCounts) {
  const Workload w = make(7, 4096, 1, 32, 32, DType::bf16);
  Ceilings c = bandwidth_only(4.8e12);
  c.math_flops = 989.5e12;
  c.exp_per_s = 16.0 * 132 * 1980e6;
  Floor f = headroom_v2(w, c);
  // 842 GFLOP / 989.5 TFLOP/s = 851 us > 1.36 GB / 4.8 TB/s = 283 us: math bounds it.
  EXPECT_EQ(f.bound_by, "math");
  EXPECT_DOUBLE_EQ(f.seconds, flops_v2(w) / 989.5e12);
  EXPECT_EQ(f.terms.size(), 3u);
  // A tiny workload is bound by one kernel launch once a launch time is known.
  const Workload tiny = make(1, 1, 1, 1, 1, DType::fp32);
  c.launch_s = 2.5e-6;
  f = headroom_v2(tiny, c);
  EXPECT_EQ(f.bound_by, "launch");
  EXPECT_EQ(f.seconds, 2.5e-6);
  ASSERT_NE(term(f, "launch"), nullptr);
  EXPECT_EQ(term(f, "launch")->amount, 1.0);
  const auto j = f.to_json();
  EXPECT_EQ(j["model"], "headroom-v2");
  EXPECT_EQ(j["bound_by"], "launch");
  EXPECT_EQ(j["terms"].size(), 4u);
}

TEST(FloorV2, DatasheetCeilingsPickTheUnitForTheDtype) {
  const Datasheet* h200 = find_datasheet("h200-sxm");
  ASSERT_NE(h200, nullptr);
  EXPECT_EQ(datasheet_ceilings(*h200, DType::bf16, false).math_flops, h200->bf16_tensor_flops);
  EXPECT_EQ(datasheet_ceilings(*h200, DType::fp16, false).math_flops, h200->fp16_tensor_flops);
  EXPECT_EQ(datasheet_ceilings(*h200, DType::fp32, false).math_flops, h200->fp32_flops);
  EXPECT_EQ(datasheet_ceilings(*h200, DType::fp32, true).math_flops, h200->tf32_tensor_flops);
  const Ceilings c = datasheet_ceilings(*h200, DType::bf16, false);
  EXPECT_EQ(c.kind, "datasheet");
  EXPECT_EQ(c.mem_bytes_per_s, 4.8e12);
  EXPECT_FALSE(c.launch_s.has_value());
  EXPECT_NE(c.source.find("h200-sxm"), std::string::npos);
  EXPECT_EQ(c.exp_per_s, 16.0 * 132 * 1980 * 1e6);
}

// ---------------------------------------------------------------------------------------------
// The datasheet table

struct Gpu {
  const char* id;
  const char* name;  // what cudaGetDeviceProperties reports
};
const Gpu kGpus[] = {
    {"rtx-3090", "NVIDIA GeForce RTX 3090"}, {"rtx-4090", "NVIDIA GeForce RTX 4090"},
    {"a10", "NVIDIA A10"},                   {"a100-40gb-sxm", "NVIDIA A100-SXM4-40GB"},
    {"a100-80gb-sxm", "NVIDIA A100-SXM4-80GB"}, {"l4", "NVIDIA L4"},
    {"l40s", "NVIDIA L40S"},                 {"h100-sxm", "NVIDIA H100 80GB HBM3"},
    {"h100-pcie", "NVIDIA H100 PCIe"},       {"h200-sxm", "NVIDIA H200"},
    {"b200", "NVIDIA B200"},
};

TEST(Datasheets, EveryGpuOfTheIssueByIdAndByName) {
  for (const Gpu& g : kGpus) {
    SCOPED_TRACE(g.id);
    const Datasheet* by_id = find_datasheet(g.id);
    ASSERT_NE(by_id, nullptr);
    EXPECT_EQ(by_id->id, g.id);
    const Datasheet* by_name = find_datasheet(g.name);
    ASSERT_NE(by_name, nullptr);
    EXPECT_EQ(by_name->id, g.id);
  }
  EXPECT_GE(datasheets().size(), std::size(kGpus));
}

TEST(Datasheets, H100PcieIsNotTheSxm) {
  const Datasheet* d = find_datasheet("NVIDIA H100 PCIe");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->id, "h100-pcie");
  EXPECT_EQ(d->mem_bytes_per_s, 2e12);
  EXPECT_EQ(find_datasheet("NVIDIA H100 SXM5 80GB")->id, "h100-sxm");
}

TEST(Datasheets, UnknownGpuHasNoRow) {
  EXPECT_EQ(find_datasheet("Some Other Accelerator 9000"), nullptr);
  EXPECT_EQ(find_datasheet("AMD Instinct MI300X"), nullptr);
}

TEST(Datasheets, EveryRowIsCompleteAndSourced) {
  std::set<std::string> ids;
  for (const Datasheet& d : datasheets()) {
    SCOPED_TRACE(d.id);
    EXPECT_TRUE(ids.insert(d.id).second) << "duplicate id";
    EXPECT_FALSE(d.source.empty());
    EXPECT_GT(d.source.size(), 20u);  // a real citation, not a placeholder
    EXPECT_FALSE(d.names.empty());
    EXPECT_GT(d.mem_bytes_per_s, 1e11);
    EXPECT_GT(d.fp32_flops, 1e12);
    EXPECT_GE(d.bf16_tensor_flops, d.fp32_flops);
    EXPECT_GE(d.fp16_tensor_flops, d.fp32_flops);
    EXPECT_GT(d.tf32_tensor_flops, 0);
    EXPECT_GT(d.sm_count, 0);
    EXPECT_GT(d.boost_mhz, 500);
    EXPECT_GT(d.exp_per_s(), 0);
  }
}

TEST(Datasheets, PinnedFigures) {
  EXPECT_EQ(find_datasheet("rtx-3090")->mem_bytes_per_s, 936e9);
  EXPECT_EQ(find_datasheet("h200-sxm")->mem_bytes_per_s, 4.8e12);
  EXPECT_EQ(find_datasheet("h100-sxm")->mem_bytes_per_s, 3.35e12);
  EXPECT_EQ(find_datasheet("a100-80gb-sxm")->mem_bytes_per_s, 2.039e12);
  EXPECT_EQ(find_datasheet("a100-40gb-sxm")->mem_bytes_per_s, 1.555e12);
}

// Regression (was a bug): find_datasheet's substring fallback matches table names inside
// longer device names and the query inside longer table names, so real devices that are not in
// the table get another GPU's ceilings:
//   "NVIDIA A100-PCIE-40GB", "NVIDIA A100 80GB PCIe" contain "NVIDIA A10"   -> a10 (600 GB/s)
//   "NVIDIA H20" is contained in "NVIDIA H200"                             -> h200-sxm
//   "NVIDIA L40" is contained in "NVIDIA L40S"                             -> l40s
//   "NVIDIA GeForce RTX 3090 Ti" contains "NVIDIA GeForce RTX 3090"        -> rtx-3090
// A wrong datasheet floor is silently wrong in every record from such a device. These must
// resolve to no row (the measured/estimated ceilings then apply) or to their own row.
TEST(Datasheets, SubstringMatchGivesOtherGpusCeilings) {
  for (const char* name : {"NVIDIA A100-PCIE-40GB", "NVIDIA A100 80GB PCIe", "NVIDIA H20", "NVIDIA L40",
                           "NVIDIA GeForce RTX 3090 Ti"}) {
    const Datasheet* d = find_datasheet(name);
    EXPECT_TRUE(d == nullptr) << "\"" << name << "\" resolved to the datasheet of " << d->id;
  }
}

}  // namespace
}  // namespace mtabench
