#pragma once
// The GPU as the harness sees it: identity and properties (CUDA runtime + NVML where present),
// and the measured ceilings of SPEC §5 (device-to-device copy bandwidth, empty-kernel time).
#include <cuda_runtime_api.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace mtabench {

struct DeviceInfo {
  int ordinal = 0;
  std::string name, uuid, pci_bus_id;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  std::int64_t memory_bytes = 0;
  std::int64_t l2_bytes = 0;
  std::int64_t smem_per_block_optin = 0;
  int max_sm_clock_mhz = 0;   // cudaDevAttrClockRate: the default (boost) SM clock
  int mem_clock_mhz = 0;
  int mem_bus_width = 0;
  int driver_version = 0, runtime_version = 0;
  bool ecc_enabled = false;
  // From NVML when it loads (the driver's libnvidia-ml); absent otherwise.
  std::optional<double> power_limit_w;
  std::optional<int> nvml_sm_clock_mhz, nvml_max_sm_clock_mhz, nvml_mem_clock_mhz;
  std::optional<int> temperature_c;
  std::optional<int> utilization_gpu_pct;
  std::string nvml_status;  // "ok" or why NVML gave nothing

  std::string hardware_key() const;  // name + SM count + memory + power limit (SPEC §7)
  nlohmann::json to_json() const;
};

// Whether a usable CUDA device exists; `why` says why not (no driver, no device, ...).
bool cuda_device_available(std::string* why = nullptr);
DeviceInfo query_device(int ordinal);

// Ceilings measured on this device in this run.
struct MeasuredCeilings {
  double copy_bytes_per_s = 0;   // device-to-device copy, bytes read + written per second
  double copy_bytes = 0;         // size of the copy (each direction)
  double empty_kernel_s = 0;     // median of an empty kernel timed like an implementation
  std::string method;
  nlohmann::json to_json() const;
  static MeasuredCeilings from_json(const nlohmann::json& j);
};
MeasuredCeilings measure_ceilings(const DeviceInfo& dev, cudaStream_t stream);

}  // namespace mtabench
