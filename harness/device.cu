#include "harness/cuda_check.h"
#include "harness/device.h"
#include "harness/nvml_probe.h"
#include "harness/timing.h"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <vector>

namespace mtabench {

bool cuda_device_available(std::string* why) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    if (why) *why = fmt::format("no usable CUDA driver or device ({})", cudaGetErrorName(e));
    (void)cudaGetLastError();
    return false;
  }
  if (n == 0) {
    if (why) *why = "no CUDA device";
    return false;
  }
  return true;
}

namespace {
std::string uuid_string(const cudaUUID_t& u) {
  const auto* b = reinterpret_cast<const unsigned char*>(u.bytes);
  return fmt::format("GPU-{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}",
                     b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
                     b[13], b[14], b[15]);
}
std::string slug(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c))) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else if (!out.empty() && out.back() != '-') out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out;
}
}  // namespace

DeviceInfo query_device(int ordinal) {
  DeviceInfo d;
  d.ordinal = ordinal;
  cudaDeviceProp p{};
  MTABENCH_CUDA_CALL(cudaGetDeviceProperties(&p, ordinal));
  d.name = p.name;
  d.uuid = uuid_string(p.uuid);
  char bus[64] = {};
  MTABENCH_CUDA_CALL(cudaDeviceGetPCIBusId(bus, sizeof bus, ordinal));
  d.pci_bus_id = bus;
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  d.sm_count = p.multiProcessorCount;
  d.memory_bytes = static_cast<std::int64_t>(p.totalGlobalMem);
  d.l2_bytes = p.l2CacheSize;
  d.smem_per_block_optin = static_cast<std::int64_t>(p.sharedMemPerBlockOptin);
  d.mem_bus_width = p.memoryBusWidth;
  d.ecc_enabled = p.ECCEnabled != 0;
  int khz = 0;
  MTABENCH_CUDA_CALL(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, ordinal));
  d.max_sm_clock_mhz = khz / 1000;
  MTABENCH_CUDA_CALL(cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, ordinal));
  d.mem_clock_mhz = khz / 1000;
  MTABENCH_CUDA_CALL(cudaDriverGetVersion(&d.driver_version));
  MTABENCH_CUDA_CALL(cudaRuntimeGetVersion(&d.runtime_version));
  const NvmlReading n = nvml_read(d.pci_bus_id);
  d.nvml_status = n.status;
  d.power_limit_w = n.power_limit_w;
  d.nvml_sm_clock_mhz = n.sm_clock_mhz;
  d.nvml_max_sm_clock_mhz = n.max_sm_clock_mhz;
  d.nvml_mem_clock_mhz = n.mem_clock_mhz;
  d.temperature_c = n.temperature_c;
  d.utilization_gpu_pct = n.utilization_gpu_pct;
  if (n.ecc_enabled) d.ecc_enabled = *n.ecc_enabled;
  return d;
}

std::string DeviceInfo::hardware_key() const {
  const long gib = std::lround(static_cast<double>(memory_bytes) / (1ll << 30));
  const std::string power = power_limit_w ? fmt::format("{}w", std::lround(*power_limit_w)) : "unknown-power";
  return fmt::format("{}-{}sm-{}gib-{}", slug(name), sm_count, gib, power);
}

nlohmann::json DeviceInfo::to_json() const {
  nlohmann::json j{{"ordinal", ordinal},
                   {"name", name},
                   {"uuid", uuid},
                   {"pci_bus_id", pci_bus_id},
                   {"compute_capability", fmt::format("{}.{}", cc_major, cc_minor)},
                   {"sm_count", sm_count},
                   {"memory_bytes", memory_bytes},
                   {"l2_bytes", l2_bytes},
                   {"smem_per_block_optin", smem_per_block_optin},
                   {"sm_clock_default_mhz", max_sm_clock_mhz},
                   {"mem_clock_mhz", mem_clock_mhz},
                   {"mem_bus_width_bits", mem_bus_width},
                   {"ecc_enabled", ecc_enabled},
                   {"cuda_driver_version", driver_version},
                   {"cuda_runtime_version", runtime_version},
                   {"nvml_status", nvml_status},
                   {"hardware_key", hardware_key()}};
  auto opt = [&](const char* k, const auto& v) {
    if (v) j[k] = *v;
    else j[k] = nullptr;
  };
  opt("power_limit_w", power_limit_w);
  opt("nvml_sm_clock_mhz", nvml_sm_clock_mhz);
  opt("nvml_max_sm_clock_mhz", nvml_max_sm_clock_mhz);
  opt("nvml_mem_clock_mhz", nvml_mem_clock_mhz);
  opt("temperature_c", temperature_c);
  opt("utilization_gpu_pct", utilization_gpu_pct);
  return j;
}

nlohmann::json MeasuredCeilings::to_json() const {
  return {{"copy_bytes_per_s", copy_bytes_per_s},
          {"copy_bytes", copy_bytes},
          {"empty_kernel_s", empty_kernel_s},
          {"method", method}};
}

MeasuredCeilings MeasuredCeilings::from_json(const nlohmann::json& j) {
  MeasuredCeilings m;
  m.copy_bytes_per_s = j.at("copy_bytes_per_s").get<double>();
  m.copy_bytes = j.at("copy_bytes").get<double>();
  m.empty_kernel_s = j.at("empty_kernel_s").get<double>();
  m.method = j.at("method").get<std::string>();
  return m;
}

namespace {
__global__ void empty_kernel() {}
}  // namespace

MeasuredCeilings measure_ceilings(const DeviceInfo& dev, cudaStream_t stream) {
  MeasuredCeilings m;
  // Copy: 1 GiB (less on small cards), device to device, 15 timed copies after 3 warm-ups;
  // the median counts bytes read plus bytes written.
  std::size_t free_b = 0, total_b = 0;
  MTABENCH_CUDA_CALL(cudaMemGetInfo(&free_b, &total_b));
  const std::size_t bytes = std::min<std::size_t>(std::size_t{1} << 30, free_b / 4) & ~std::size_t{0xfffff};
  void *a = nullptr, *b = nullptr;
  MTABENCH_CUDA_CALL(cudaMalloc(&a, bytes));
  MTABENCH_CUDA_CALL(cudaMalloc(&b, bytes));
  MTABENCH_CUDA_CALL(cudaMemsetAsync(a, 1, bytes, stream));
  cudaEvent_t e0, e1;
  MTABENCH_CUDA_CALL(cudaEventCreate(&e0));
  MTABENCH_CUDA_CALL(cudaEventCreate(&e1));
  std::vector<double> t;
  for (int i = 0; i < 18; ++i) {
    MTABENCH_CUDA_CALL(cudaEventRecord(e0, stream));
    MTABENCH_CUDA_CALL(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, stream));
    MTABENCH_CUDA_CALL(cudaEventRecord(e1, stream));
    MTABENCH_CUDA_CALL(cudaEventSynchronize(e1));
    float ms = 0;
    MTABENCH_CUDA_CALL(cudaEventElapsedTime(&ms, e0, e1));
    if (i >= 3) t.push_back(ms * 1e-3);
  }
  std::sort(t.begin(), t.end());
  m.copy_bytes = static_cast<double>(bytes);
  m.copy_bytes_per_s = 2.0 * static_cast<double>(bytes) / t[t.size() / 2];
  MTABENCH_CUDA_CALL(cudaEventDestroy(e0));
  MTABENCH_CUDA_CALL(cudaEventDestroy(e1));
  MTABENCH_CUDA_CALL(cudaFree(a));
  MTABENCH_CUDA_CALL(cudaFree(b));

  // Empty kernel: timed by the protocol itself, so the launch term of the floor is measured the
  // way every implementation is.
  // One launch first: with lazy module loading the first launch of a kernel waits for the
  // device, which the protocol's hold would turn into a one-second stall.
  empty_kernel<<<1, 1, 0, stream>>>();
  MTABENCH_CUDA_CHECK_LAUNCH();
  MTABENCH_CUDA_CALL(cudaStreamSynchronize(stream));
  DeviceTimer timer(dev.l2_bytes, dev.max_sm_clock_mhz);
  TimedCall tc;
  tc.prepare = [](std::int64_t) {};
  tc.call = [stream] {
    empty_kernel<<<1, 1, 0, stream>>>();
    MTABENCH_CUDA_CHECK_LAUNCH();
  };
  TimingOptions opt;
  opt.stop.max_time_s = 2.0;
  opt.stop.min_time_s = 0.2;
  opt.stop.target_ci_rel = 0.01;
  const TimingResult r = timer.measure(tc, stream, opt);
  m.empty_kernel_s = r.device.median;
  m.method = fmt::format(
      "copy: median of 15 cudaMemcpyAsync device-to-device of {} MiB, (read + write) / time; "
      "launch: empty <<<1,1>>> kernel timed by {} (median of {})",
      bytes >> 20, kProtocol, r.device.n);
  return m;
}

}  // namespace mtabench
