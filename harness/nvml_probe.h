#pragma once
// NVML, loaded at run time (dlopen of the driver's libnvidia-ml.so.1) so that the binary starts
// on machines with no driver. Only the handful of calls mtabench reads.
#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace mtabench {

struct NvmlReading {
  bool ok = false;
  std::string status;
  std::optional<double> power_limit_w;
  std::optional<int> sm_clock_mhz, max_sm_clock_mhz, mem_clock_mhz, temperature_c, utilization_gpu_pct;
  std::optional<bool> ecc_enabled;
  std::optional<unsigned long long> clock_event_reasons;  // throttle reasons bitmask
};

// Reads the device with this PCI bus id ("0000:3B:00.0").
NvmlReading nvml_read(const std::string& pci_bus_id);

// How many processes hold a CUDA context on that device (the caller included, once it has one);
// empty where NVML cannot say.
std::optional<int> nvml_compute_processes(const std::string& pci_bus_id);

// What a record says about other processes on the GPU, from the counts taken before and after
// its measurement: {"before", "after"} (null where NVML could not say) for timing.gpu_processes,
// and a warning when either count shows more than the measuring process. Time-slicing with
// another process need not show in the spread of the samples, so the warning is what tells.
struct SharedGpuView {
  nlohmann::json counts;
  std::optional<std::string> warning;
};
SharedGpuView shared_gpu_view(std::optional<int> before, std::optional<int> after);

// From a record: how many other processes its timing.gpu_processes counts show (the larger of
// before and after, less the measuring process); 0 where the record has no counts or none above
// one. The leaderboard's eligibility rule and `mtabench run --fail-on-shared-gpu` read this.
int other_gpu_processes(const nlohmann::json& record);

}  // namespace mtabench
