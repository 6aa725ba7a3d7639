// What a record says when other processes share the GPU (harness/nvml_probe.h): the counts go in
// as read, and only a count above the measuring process itself raises the warning.
#include "harness/nvml_probe.h"

#include <gtest/gtest.h>

namespace mtabench {
namespace {

TEST(SharedGpu, AloneIsQuiet) {
  const SharedGpuView v = shared_gpu_view(1, 1);
  EXPECT_EQ(v.counts["before"], 1);
  EXPECT_EQ(v.counts["after"], 1);
  EXPECT_FALSE(v.warning);
}

TEST(SharedGpu, AnotherProcessBeforeOrAfterWarns) {
  const SharedGpuView before = shared_gpu_view(2, 1);
  ASSERT_TRUE(before.warning);
  EXPECT_NE(before.warning->find("1 other process"), std::string::npos) << *before.warning;
  const SharedGpuView after = shared_gpu_view(1, 4);
  ASSERT_TRUE(after.warning);
  EXPECT_NE(after.warning->find("3 other process"), std::string::npos) << *after.warning;
}

TEST(SharedGpu, UnknownCountsAreNullNotZero) {
  const SharedGpuView v = shared_gpu_view(std::nullopt, 2);
  EXPECT_TRUE(v.counts["before"].is_null());
  EXPECT_EQ(v.counts["after"], 2);
  EXPECT_TRUE(v.warning);
  EXPECT_FALSE(shared_gpu_view(std::nullopt, std::nullopt).warning);
}

// What the leaderboard's rule and `run --fail-on-shared-gpu` read back from a record.
TEST(SharedGpu, OtherProcessesReadBackFromARecord) {
  nlohmann::json rec = {{"timing", {{"gpu_processes", shared_gpu_view(1, 3).counts}}}};
  EXPECT_EQ(other_gpu_processes(rec), 2);
  rec["timing"]["gpu_processes"] = shared_gpu_view(1, 1).counts;
  EXPECT_EQ(other_gpu_processes(rec), 0);
  rec["timing"]["gpu_processes"] = shared_gpu_view(std::nullopt, std::nullopt).counts;
  EXPECT_EQ(other_gpu_processes(rec), 0);
  EXPECT_EQ(other_gpu_processes(nlohmann::json{{"timing", nullptr}}), 0);  // no timing (a failed case)
  EXPECT_EQ(other_gpu_processes(nlohmann::json::object()), 0);
}

}  // namespace
}  // namespace mtabench
