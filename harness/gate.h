#pragma once
// The correctness gate (SPEC §4). Before timing: a first call on fresh inputs with the stream
// held (work that escapes the harness's stream is caught), checked against the oracle; then the
// same scores with new weights and bias in the same buffers (a result cached by pointer or by a
// few input values is caught). During timing: every sample gets fresh inputs and a poisoned
// output, and one randomly chosen timed output is checked the same way. Every check also
// compares the inputs with what was generated (an implementation that modifies them is caught).
#include "harness/check.h"
#include "harness/device_buffers.h"
#include "harness/workload.h"
#include "impls/impl.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace mtabench {

struct DeviceInfo;

struct GateOptions {
  std::uint64_t seed = 1;
  double oracle_full_max_macs = 3e9;  // above this, sampled oracle rows + the GPU reference
  int sampled_rows = 32;
};

struct GateStep {
  std::string name;  // "first call", "weights changed", "timed sample 7"
  CheckResult check;
  std::vector<std::string> mutated;  // inputs that no longer hold what was generated
  bool passed() const { return check.passed && mutated.empty(); }
  std::string reason() const;
  nlohmann::json to_json(const Workload& w) const;
};

struct StreamProbe {
  bool ran = false;
  bool escaped = false;        // output changed while the harness held its stream
  bool call_waited = false;    // the call did not return until the hold gave up
  std::int64_t written_while_held = 0;
  // Elements of y written after the harness's stream had reached the end of the call: work forked
  // to another stream and never joined back (what is recorded after the call does not wait for it).
  std::int64_t written_after_stream_end = 0;
  nlohmann::json to_json() const;
};

// Where a case's tensors live and how the gate reaches them: device or host memory.
class CaseBackend {
 public:
  virtual ~CaseBackend() = default;
  virtual void generate(InputSets sets) = 0;  // inputs for these sets
  virtual void poison() = 0;
  virtual void call() = 0;  // the implementation's run() on this case's tensors
  virtual void sync() = 0;
  virtual std::vector<std::string> mutated_inputs(InputSets expected) = 0;
  virtual HostInputs inputs() = 0;
  virtual HostTensor output() = 0;
  // The GPU reference on the current inputs (fp32, y layout), where there is a device; straight
  // into a host tensor (a second copy would be another 4 bytes an element: 16 GB at seq 32768).
  virtual std::optional<HostTensor> reference_fp32() { return std::nullopt; }
  virtual StreamProbe probe_call() { return {}; }  // a call with the stream held (device only)
};

std::unique_ptr<CaseBackend> make_device_backend(const Workload& w, Implementation& impl,
                                                 cudaStream_t stream, std::uint64_t seed);
std::unique_ptr<CaseBackend> make_host_backend(const Workload& w, Implementation& impl,
                                               std::uint64_t seed);

// What the gate itself holds for one case of a device implementation: on the device, the four
// tensors and, where the oracle checks sampled rows only, the GPU reference checker's fp32 y and
// scratch; on the host, the downloaded inputs and y, and that checker's y (or the full oracle's
// fp64 y). The implementation's own memory is its check_support's business. run_case refuses a
// workload the gate cannot hold, with both figures, rather than fail mid-gate for want of memory.
struct GateMemory {
  double device_bytes = 0, host_bytes = 0;
};
GateMemory gate_memory(const Workload& w, const GateOptions& opt);

class Gate {
 public:
  Gate(const Workload& w, CaseBackend& backend, GateOptions opt, bool tf32);
  // First call (stream probe) and the weights-changed call. Stops at the first failure.
  std::vector<GateStep> before_timing(StreamProbe& probe);
  // The input sets of timing sample i (fresh for every sample).
  static InputSets sample_sets(std::int64_t sample);
  GateStep check_now(const std::string& name, InputSets sets);

 private:
  const Workload& w_;
  CaseBackend& b_;
  GateOptions opt_;
  double tol_;
  std::mt19937_64 rng_;
  std::vector<RowRef> pick_rows();
};

}  // namespace mtabench
