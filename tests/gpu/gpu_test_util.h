#pragma once
// Shared by the GPU tests: skip cleanly (GTEST_SKIP -> ctest "skipped") where no device is usable,
// and run one case in-process the way `mtabench run --no-isolate` does.
#include "harness/device.h"
#include "harness/runner.h"
#include "tests/test_workload.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace mtabench::testing {

// Call first in every GPU test.
#define MTABENCH_REQUIRE_GPU()                                              \
  do {                                                                      \
    std::string why_;                                                       \
    if (!::mtabench::cuda_device_available(&why_)) GTEST_SKIP() << why_;    \
  } while (false)

// A process-wide context on device 0 (ceilings measured once, lazily).
inline CaseContext& gpu_context(bool with_ceilings = false) {
  static CaseContext ctx = [] {
    CaseContext c;
    c.device = query_device(0);
    MTABENCH_CUDA_CALL(cudaStreamCreateWithFlags(&c.stream, cudaStreamNonBlocking));
    c.timer = std::make_unique<DeviceTimer>(c.device->l2_bytes, c.device->max_sm_clock_mhz);
    return c;
  }();
  if (with_ceilings && !ctx.ceilings) ctx.ceilings = measure_ceilings(*ctx.device, ctx.stream);
  return ctx;
}

// Short timing for tests (they assert outcomes, never times).
inline RunOptions quick_options(bool verify_only = true) {
  RunOptions o;
  o.verify_only = verify_only;
  o.timing.stop.max_time_s = 0.5;
  o.timing.stop.min_time_s = 0.05;
  o.timing.min_warmup_s = 0.0;
  o.run_id = "test";
  o.command_line = "gtest";
  return o;
}

}  // namespace mtabench::testing
