// The cuDNN composition through the harness's own case runner: the correctness gate on small
// shapes that cover every dtype, k 1/3/5/7, heads_in != heads_out, seq 1 and prime seqs. The
// support checks that need no device run everywhere.
#include "gpu_test_util.h"

#include "harness/device.h"
#include "impls/impl.h"

#include <fmt/core.h>
#include <gtest/gtest.h>

#include <string>

namespace mtabench {
namespace {

using testing::make_workload;

const RegistryEntry* cudnn_entry() { return find_impl(builtin_registry(), "cudnn"); }

#define MTABENCH_REQUIRE_CUDNN()                                             \
  do {                                                                       \
    if (!cudnn_entry()) GTEST_SKIP() << "built without cuDNN";              \
  } while (false)

struct Shape {
  int k;
  std::int64_t seq, batch, hin, hout;
  DType dtype;
};

std::string shape_name(const ::testing::TestParamInfo<Shape>& p) {
  const Shape& s = p.param;
  return fmt::format("k{}_seq{}_b{}_h{}x{}_{}", s.k, s.seq, s.batch, s.hin, s.hout, dtype_name(s.dtype));
}

class CudnnGate : public ::testing::TestWithParam<Shape> {};

TEST_P(CudnnGate, Passes) {
  MTABENCH_REQUIRE_GPU();
  MTABENCH_REQUIRE_CUDNN();
  const Shape& s = GetParam();
  const Workload w = make_workload(s.k, s.seq, s.batch, s.hin, s.hout, s.dtype);
  const CaseResult res = run_case(w, *cudnn_entry(), testing::quick_options(), testing::gpu_context());
  const auto& rec = res.record;
  EXPECT_EQ(rec["outcome"].get<std::string>(), "passed") << rec["reason"].dump();
  EXPECT_FALSE(rec["implementation"]["tf32"].get<bool>());
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, CudnnGate,
    ::testing::Values(Shape{3, 32, 2, 4, 4, DType::bf16},   // the leaderboard's seed
                      Shape{3, 1, 1, 2, 3, DType::fp32},    // seq 1: the 3x3 window sees one element
                      Shape{1, 17, 1, 3, 2, DType::fp16},   // k 1: no padding
                      Shape{5, 48, 1, 2, 2, DType::fp32},
                      Shape{3, 31, 2, 2, 5, DType::bf16},   // prime seq, heads_in < heads_out
                      Shape{5, 97, 2, 6, 4, DType::fp16},   // prime seq, heads_in > heads_out
                      Shape{3, 13, 3, 4, 4, DType::fp32},
                      Shape{7, 64, 1, 8, 8, DType::bf16},
                      Shape{3, 257, 1, 2, 2, DType::bf16}),  // rows longer than one block pass
    shape_name);

// One case through timing as well: the timed output is checked again on fresh inputs.
TEST(CudnnTimed, SeedPassesWithTiming) {
  MTABENCH_REQUIRE_GPU();
  MTABENCH_REQUIRE_CUDNN();
  const Workload w = make_workload(3, 32, 2, 4, 4, DType::bf16);
  const CaseResult res = run_case(w, *cudnn_entry(), testing::quick_options(false), testing::gpu_context());
  EXPECT_EQ(res.record["outcome"].get<std::string>(), "passed") << res.record["reason"].dump();
}

// Refusals that need no device: they happen before cuDNN is asked anything.
TEST(CudnnSupport, NeedsADevice) {
  MTABENCH_REQUIRE_CUDNN();
  const auto impl = cudnn_entry()->make();
  const Support s = impl->check_support(make_workload(3, 32, 2, 4, 4, DType::bf16), nullptr);
  EXPECT_FALSE(s.ok);
  EXPECT_FALSE(s.reason.empty());
}

TEST(CudnnSupport, RefusesABatchItemOver32BitIndexing) {
  MTABENCH_REQUIRE_CUDNN();
  DeviceInfo dev;
  dev.memory_bytes = std::int64_t{1} << 50;
  const auto impl = cudnn_entry()->make();
  // 2 * 32768^2 = 2^31 elements in one batch item: one more than an int can count.
  const Support s = impl->check_support(make_workload(3, 32768, 1, 2, 2, DType::bf16), &dev);
  EXPECT_FALSE(s.ok);
  EXPECT_NE(s.reason.find("32-bit"), std::string::npos) << s.reason;
}

TEST(CudnnSupport, RefusesWhatDoesNotFitInMemory) {
  MTABENCH_REQUIRE_CUDNN();
  DeviceInfo dev;
  dev.memory_bytes = std::int64_t{1} << 30;
  const auto impl = cudnn_entry()->make();
  // P alone is 2 * 4 * 8192^2 * 2 bytes = 1 GiB.
  const Support s = impl->check_support(make_workload(3, 8192, 2, 4, 4, DType::bf16), &dev);
  EXPECT_FALSE(s.ok);
  EXPECT_NE(s.reason.find("MiB"), std::string::npos) << s.reason;
}

}  // namespace
}  // namespace mtabench
