#pragma once
// One case: (workload, implementation) on this process's device or host. Support check, then
// the correctness gate, then the timing protocol, then the floor, all written into one record.
// Every outcome is a record; nothing here exits the process.
#include "harness/device.h"
#include "harness/gate.h"
#include "harness/timing.h"
#include "harness/workload.h"
#include "impls/impl.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
#include <string>

namespace mtabench {

struct RunOptions {
  TimingOptions timing;
  std::uint64_t seed = 1;
  bool verify_only = false;  // the gate only, no timing
  GateOptions gate;
  std::string run_id;
  std::string command_line;
};

// What a process running cases shares between them.
struct CaseContext {
  std::optional<DeviceInfo> device;            // empty: no usable GPU, host implementations only
  std::optional<MeasuredCeilings> ceilings;    // measured on this device in this run
  cudaStream_t stream = nullptr;
  std::unique_ptr<DeviceTimer> timer;
  std::string hardware_key() const;
};

struct CaseResult {
  nlohmann::json record;     // sealed
  bool context_lost = false; // a sticky CUDA error: this process must not run more device cases
};

CaseResult run_case(const Workload& w, const RegistryEntry& impl, const RunOptions& opt, CaseContext& ctx);

// A record for a case that never produced one itself (its process crashed or hung).
nlohmann::json synthesized_record(const Workload& w, const RegistryEntry& impl, const RunOptions& opt,
                                  const std::optional<DeviceInfo>& dev, const std::string& hardware_key,
                                  const char* outcome, const std::string& reason);

// Builds the floors block of a record for a measured median (seconds, or nullopt).
nlohmann::json floor_block(const Workload& w, bool tf32, const std::optional<DeviceInfo>& dev,
                           const std::optional<MeasuredCeilings>& ceilings, std::optional<double> median_s);

}  // namespace mtabench
