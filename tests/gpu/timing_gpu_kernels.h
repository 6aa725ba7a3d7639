#pragma once
// Kernels the timing tests need (tests/gpu/timing_gpu_kernels.cu), behind plain host functions
// so the tests themselves stay ordinary C++.
#include <cuda_runtime_api.h>

#include <cstdint>

namespace mtabench::testing {

// Dependent-load chase: thread t starts at line starts[t] of `lines` (128-byte lines whose first
// 32-bit word is the index of the next line) and follows `steps` links, loading through L2 only
// (ld.global.cg, so L1 plays no part). Latency-bound by design: its time tells where the lines
// were (L2 or device memory), which a bandwidth-bound read shows far less clearly.
void launch_chase(const std::uint32_t* lines, const std::uint32_t* starts, int blocks, int threads, int steps,
                  std::uint32_t* sink, cudaStream_t stream);

// A kernel that does nothing: what the protocol measures as its launch floor.
void launch_empty(cudaStream_t stream);

}  // namespace mtabench::testing
