#pragma once
// What an implementation is to the harness (after CUTLASS's can_implement -> initialize -> run).
// An implementation declares who it is and what it supports; the harness owns everything else:
// allocation, inputs, timing, checking, records. No implementation times or checks itself.
#include "harness/workload.h"

#include <cuda_runtime_api.h>
#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

namespace mtabench {

struct DeviceInfo;  // harness/device.h

enum class Location { host, device };

struct ImplInfo {
  std::string name;         // registry key, e.g. "fused"
  std::string version;      // bump when the implementation's code changes
  std::string language;     // cuda, c++, triton, python
  std::string license;      // SPDX identifier
  std::string source;       // where the code lives (path in this repository or a URL)
  std::string description;  // one line
  Location location = Location::device;  // where its tensors live and where it runs
  bool tf32 = false;        // uses TF32 for fp32 math: judged at the TF32 tolerance, ranked apart

  nlohmann::json to_json() const;
};

struct Support {
  bool ok = true;
  std::string reason;  // why not, in the implementation's words
  static Support yes() { return {}; }
  static Support no(std::string why) { return {false, std::move(why)}; }
};

// The four tensors of one call, contiguous, row-major as in SPEC §1, in the workload's dtype:
// device pointers for device implementations, host pointers for host ones. Each starts on a
// 256-byte boundary (the harness allocates each with cudaMalloc), so 16-byte vector loads of a
// row line up wherever the row itself does.
struct TensorArgs {
  const void* scores;  // [batch, heads_in, seq, seq]
  const void* weight;  // [heads_out, heads_in, k, k]
  const void* bias;    // [heads_out]
  void* y;             // [batch, heads_out, seq, seq]
};

class Implementation {
 public:
  virtual ~Implementation() = default;
  virtual ImplInfo info() const = 0;
  // Whether this workload can run here. `dev` is null on a machine without a usable GPU.
  virtual Support check_support(const Workload& w, const DeviceInfo* dev) const = 0;
  // Everything that must stay out of the timed call: handles, descriptors, algorithm choice,
  // workspace. Called once per workload before any run().
  virtual void initialize(const Workload& w, const DeviceInfo* dev, cudaStream_t stream) {
    (void)w, (void)dev, (void)stream;
  }
  // One call: read the inputs, write all of y. A device implementation enqueues its work on
  // `stream` and returns: no allocation, no host synchronization, no other stream.
  virtual void run(const TensorArgs& t, cudaStream_t stream) = 0;
  // What initialize() chose (a kernel variant, cuDNN's algorithm, a tiling), for the record's
  // implementation.configuration: a reader can see which code the time belongs to. Null: nothing.
  virtual nlohmann::json configuration() const { return nullptr; }
};

using ImplFactory = std::unique_ptr<Implementation> (*)();
struct RegistryEntry {
  const char* name;
  ImplFactory make;
};
using Registry = std::vector<RegistryEntry>;

// impls/registry.cpp: one line per implementation.
const Registry& builtin_registry();
const RegistryEntry* find_impl(const Registry& reg, const std::string& name);

}  // namespace mtabench
