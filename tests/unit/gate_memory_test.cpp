// What the gate itself holds for a case (gate_memory, harness/gate.h): run_case refuses, with
// both figures, a workload whose gate would not fit the device or the host, instead of failing
// mid-gate for want of memory (the checker's fp32 y alone is 16 GiB at seq 32768, batch 1).
#include "harness/gate.h"
#include "impls/reference/reference_gpu.h"
#include "tests/test_workload.h"

#include <gtest/gtest.h>

namespace mtabench {
namespace {

constexpr auto make = &testing::make_workload;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// The four tensors in the workload dtype (2 bytes here): what the gate holds in any case.
double tensor_bytes(const Workload& w) {
  return static_cast<double>(w.scores_elems() + w.weight_elems() + w.bias_elems() + w.y_elems()) * 2.0;
}

TEST(GateMemory, SmallWorkloadsHoldTheTensorsAndTheFullOracle) {
  const Workload w = make(3, 32, 2, 4, 4, DType::bf16);  // the seed: the oracle checks every row
  const GateMemory m = gate_memory(w, GateOptions{});
  EXPECT_DOUBLE_EQ(m.device_bytes, tensor_bytes(w));
  EXPECT_DOUBLE_EQ(m.host_bytes, tensor_bytes(w) + 8.0 * w.y_elems());
}

TEST(GateMemory, LargeWorkloadsAddTheGpuReferenceChecker) {
  // workloads/long-seq.json's seq 32768, batch 1: 8 GiB of scores and of y (bf16), the checker's
  // fp32 y (16 GiB) and its scratch (the fp32 probabilities, 16 GiB, and the row statistics).
  const Workload w = make(3, 32768, 1, 4, 4, DType::bf16);
  const GateMemory m = gate_memory(w, GateOptions{});
  EXPECT_NEAR(m.device_bytes / kGiB, 8 + 8 + 16 + 16, 0.01);
  EXPECT_DOUBLE_EQ(m.device_bytes,
                   tensor_bytes(w) + 4.0 * w.y_elems() + static_cast<double>(reference::scratch_bytes(w)));
  EXPECT_NEAR(m.host_bytes / kGiB, 8 + 8 + 16, 0.01);
  // A lower bound for the full oracle moves the same workload to it (no checker on the device).
  GateOptions all;
  all.oracle_full_max_macs = 1e30;
  EXPECT_NEAR(gate_memory(w, all).device_bytes / kGiB, 16, 0.01);
  EXPECT_NEAR(gate_memory(w, all).host_bytes / kGiB, 16 + 32, 0.01);
}

}  // namespace
}  // namespace mtabench
