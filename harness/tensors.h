#pragma once
// Host-side tensors in the workload's dtype and the input set of one call.
#include "harness/dtype.h"
#include "harness/workload.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace mtabench {

struct HostTensor {
  DType dtype = DType::fp32;
  std::size_t elems = 0;
  std::vector<unsigned char> bytes;

  HostTensor() = default;
  HostTensor(DType t, std::size_t n) : dtype(t), elems(n), bytes(n * dtype_size(t)) {}
  std::size_t size_bytes() const { return bytes.size(); }
  void* data() { return bytes.data(); }
  const void* data() const { return bytes.data(); }
  float at(std::size_t i) const { return load_as_float(bytes.data(), dtype, i); }
  void set(std::size_t i, float v) { store_from_float(bytes.data(), dtype, i, v); }
};

struct HostInputs {
  HostTensor scores, weight, bias;
};

// Generates input set `set` of workload w under `seed` on the host (multithreaded), rounded to
// the workload dtype. Same distribution and function as the device generator.
HostInputs generate_inputs_host(const Workload& w, std::uint64_t seed, std::uint64_t set);

// Standard deviations of SPEC §1: scores N(0,1)*scale, weight N(0,1)/sqrt(heads_in*k*k),
// bias N(0, 0.1^2).
struct InputScales {
  float scores, weight, bias;
};
InputScales input_scales(const Workload& w);

// Runs f(begin, end) over [0, n) split across the machine's hardware threads.
void parallel_for(std::int64_t n, const std::function<void(std::int64_t, std::int64_t)>& f,
                  std::int64_t min_chunk = 1);

}  // namespace mtabench
