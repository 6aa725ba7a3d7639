#include "harness/nvml_probe.h"

#include <dlfcn.h>

#include <algorithm>

#include <mutex>

namespace mtabench {

namespace {
// The subset of nvml.h used here; NVML's C ABI is stable across driver versions.
using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
constexpr int NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2, NVML_TEMPERATURE_GPU = 0;
struct nvmlUtilization_t {
  unsigned int gpu, memory;
};

struct Nvml {
  void* lib = nullptr;
  std::string status = "not loaded";
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*by_pci)(const char*, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned int*) = nullptr;
  nvmlReturn_t (*max_clock)(nvmlDevice_t, int, unsigned int*) = nullptr;
  nvmlReturn_t (*power_limit)(nvmlDevice_t, unsigned int*) = nullptr;
  nvmlReturn_t (*ecc)(nvmlDevice_t, int*, int*) = nullptr;
  nvmlReturn_t (*temp)(nvmlDevice_t, int, unsigned int*) = nullptr;
  nvmlReturn_t (*util)(nvmlDevice_t, nvmlUtilization_t*) = nullptr;
  nvmlReturn_t (*reasons)(nvmlDevice_t, unsigned long long*) = nullptr;
  // Called with a zero-length array it only counts: the struct layout never matters.
  nvmlReturn_t (*processes)(nvmlDevice_t, unsigned int*, void*) = nullptr;

  template <class F>
  void sym(F& f, const char* name) {
    f = reinterpret_cast<F>(dlsym(lib, name));
  }
  Nvml() {
    lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      status = "libnvidia-ml.so.1 not found";
      return;
    }
    sym(init, "nvmlInit_v2");
    sym(by_pci, "nvmlDeviceGetHandleByPciBusId_v2");
    sym(clock, "nvmlDeviceGetClockInfo");
    sym(max_clock, "nvmlDeviceGetMaxClockInfo");
    sym(power_limit, "nvmlDeviceGetEnforcedPowerLimit");
    sym(ecc, "nvmlDeviceGetEccMode");
    sym(temp, "nvmlDeviceGetTemperature");
    sym(util, "nvmlDeviceGetUtilizationRates");
    sym(reasons, "nvmlDeviceGetCurrentClocksEventReasons");
    if (!reasons) sym(reasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
    sym(processes, "nvmlDeviceGetComputeRunningProcesses_v3");
    if (!processes) sym(processes, "nvmlDeviceGetComputeRunningProcesses_v2");
    if (!init || !by_pci) {
      status = "libnvidia-ml.so.1 lacks nvmlInit_v2/nvmlDeviceGetHandleByPciBusId_v2";
      return;
    }
    const int rc = init();
    status = rc == 0 ? "ok" : "nvmlInit_v2 returned " + std::to_string(rc);
  }
};

Nvml& nvml() {
  static Nvml n;
  return n;
}
}  // namespace

NvmlReading nvml_read(const std::string& pci_bus_id) {
  NvmlReading r;
  Nvml& n = nvml();
  r.status = n.status;
  if (n.status != "ok") return r;
  nvmlDevice_t dev = nullptr;
  if (n.by_pci(pci_bus_id.c_str(), &dev) != 0) {
    r.status = "no NVML device at PCI " + pci_bus_id;
    return r;
  }
  r.ok = true;
  unsigned int u = 0;
  if (n.clock && n.clock(dev, NVML_CLOCK_SM, &u) == 0) r.sm_clock_mhz = static_cast<int>(u);
  if (n.max_clock && n.max_clock(dev, NVML_CLOCK_SM, &u) == 0) r.max_sm_clock_mhz = static_cast<int>(u);
  if (n.clock && n.clock(dev, NVML_CLOCK_MEM, &u) == 0) r.mem_clock_mhz = static_cast<int>(u);
  if (n.power_limit && n.power_limit(dev, &u) == 0) r.power_limit_w = u / 1000.0;
  if (n.temp && n.temp(dev, NVML_TEMPERATURE_GPU, &u) == 0) r.temperature_c = static_cast<int>(u);
  int cur = 0, pend = 0;
  if (n.ecc && n.ecc(dev, &cur, &pend) == 0) r.ecc_enabled = cur != 0;
  nvmlUtilization_t ut{};
  if (n.util && n.util(dev, &ut) == 0) r.utilization_gpu_pct = static_cast<int>(ut.gpu);
  unsigned long long reasons = 0;
  if (n.reasons && n.reasons(dev, &reasons) == 0) r.clock_event_reasons = reasons;
  return r;
}

std::optional<int> nvml_compute_processes(const std::string& pci_bus_id) {
  Nvml& n = nvml();
  nvmlDevice_t dev = nullptr;
  if (n.status != "ok" || !n.processes || n.by_pci(pci_bus_id.c_str(), &dev) != 0) return std::nullopt;
  constexpr int kSuccess = 0, kInsufficientSize = 7;
  unsigned int count = 0;
  const nvmlReturn_t rc = n.processes(dev, &count, nullptr);
  if (rc != kSuccess && rc != kInsufficientSize) return std::nullopt;
  return static_cast<int>(count);
}

SharedGpuView shared_gpu_view(std::optional<int> before, std::optional<int> after) {
  auto count = [](std::optional<int> c) { return c ? nlohmann::json(*c) : nlohmann::json(); };
  SharedGpuView v;
  v.counts = {{"before", count(before)}, {"after", count(after)}};
  const int most = std::max(before.value_or(0), after.value_or(0));
  if (most > 1)
    v.warning = "the GPU was shared: " + std::to_string(most - 1) +
                " other process(es) held a CUDA context on it while this case was measured (NVML); the times may "
                "include their work";
  return v;
}

int other_gpu_processes(const nlohmann::json& record) {
  if (!record.is_object() || !record.contains("timing") || !record["timing"].is_object()) return 0;
  const nlohmann::json& t = record["timing"];
  if (!t.contains("gpu_processes") || !t["gpu_processes"].is_object()) return 0;
  int most = 0;
  for (const char* k : {"before", "after"})
    if (t["gpu_processes"].contains(k) && t["gpu_processes"][k].is_number_integer())
      most = std::max(most, t["gpu_processes"][k].get<int>());
  return std::max(most - 1, 0);
}

}  // namespace mtabench
