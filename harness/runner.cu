#include "harness/cuda_check.h"
#include "harness/floor.h"
#include "harness/nvml_probe.h"
#include "harness/provenance.h"
#include "harness/record.h"
#include "harness/runner.h"

#include <fmt/core.h>

#include <chrono>
#include <random>

namespace mtabench {

std::string CaseContext::hardware_key() const {
  return device ? device->hardware_key() : host_hardware_key();
}

namespace {

nlohmann::json base_record(const Workload& w, const ImplInfo& info, const RunOptions& opt,
                           const std::optional<DeviceInfo>& dev, const std::string& hardware_key,
                           bool host_impl) {
  nlohmann::json wl = w.to_json();
  wl["identity"] = w.identity();
  wl["source"] = w.source;
  const std::uint64_t seed = w.seed.value_or(opt.seed);
  nlohmann::json prov{
      {"harness", harness_provenance()},
      {"cuda", {{"runtime_version", dev ? dev->runtime_version : 0}, {"driver_version", dev ? dev->driver_version : 0}}},
      {"cudnn_version", cudnn_version_string()},
      {"device", dev && !host_impl ? dev->to_json() : nlohmann::json(nullptr)},
      {"hardware_key", hardware_key},
      {"host", host_provenance()},
      {"timestamp_utc", utc_timestamp()},
      {"command_line", opt.command_line},
      {"input_seeds", {{"seed", seed},
                       {"generator", "counter-based normal (harness/rng.h); tensor t, set s, element i"},
                       {"gate_sets", "999 (unchecked first call), 0 (first call), scores 0 + params 1 (weights changed)"},
                       {"timing_sets", "1000 + sample index, fresh for every sample"}}}};
  return {{"run_id", opt.run_id},
          {"workload", wl},
          {"implementation", info.to_json()},
          {"outcome", kFailed},
          {"reason", ""},
          {"timing", nullptr},
          {"correctness", nullptr},
          {"floor", nullptr},
          {"trust", {{"level", "measured"}, {"source", nullptr}}},
          {"provenance", prov}};
}

}  // namespace

nlohmann::json floor_block(const Workload& w, bool tf32, const std::optional<DeviceInfo>& dev,
                           const std::optional<MeasuredCeilings>& ceilings, std::optional<double> median_s) {
  nlohmann::json fb{{"headroom_v1", {{"datasheet", nullptr}, {"measured", nullptr}}},
                    {"headroom_v2", {{"datasheet", nullptr}, {"measured", nullptr}}},
                    {"datasheet_id", nullptr},
                    {"time_over_floor", nullptr},
                    {"time_over_floor_datasheet", nullptr},
                    {"impossible", false}};
  if (!dev) return fb;
  if (const Datasheet* d = find_datasheet(dev->name)) {
    const Ceilings c = datasheet_ceilings(*d, w.dtype, tf32);
    fb["datasheet_id"] = d->id;
    fb["headroom_v1"]["datasheet"] = headroom_v1(w, c).to_json();
    const Floor f2 = headroom_v2(w, c);
    fb["headroom_v2"]["datasheet"] = f2.to_json();
    fb["headroom_v2"]["datasheet"]["source"] = c.source;
    if (median_s) fb["time_over_floor_datasheet"] = *median_s / f2.seconds;
  }
  if (ceilings) {
    const Ceilings c = measured_ceilings(*dev, *ceilings, w.dtype, tf32);
    fb["headroom_v1"]["measured"] = headroom_v1(w, c).to_json();
    const Floor f2 = headroom_v2(w, c);
    fb["headroom_v2"]["measured"] = f2.to_json();
    fb["headroom_v2"]["measured"]["source"] = c.source;
    if (median_s) {
      fb["time_over_floor"] = *median_s / f2.seconds;
      // Faster than bytes over the measured copy rate, or than one measured launch: not physical.
      fb["impossible"] = *median_s < f2.seconds;
    }
  }
  return fb;
}

nlohmann::json synthesized_record(const Workload& w, const RegistryEntry& e, const RunOptions& opt,
                                  const std::optional<DeviceInfo>& dev, const std::string& hardware_key,
                                  const char* outcome, const std::string& reason) {
  const auto impl = e.make();
  const ImplInfo info = impl->info();
  nlohmann::json r = base_record(w, info, opt, dev, hardware_key, info.location == Location::host);
  r["outcome"] = outcome;
  r["reason"] = reason;
  return seal_record(std::move(r));
}

CaseResult run_case(const Workload& w, const RegistryEntry& entry, const RunOptions& opt, CaseContext& ctx) {
  const auto t_case = std::chrono::steady_clock::now();
  CaseResult out;
  std::unique_ptr<Implementation> impl = entry.make();
  const ImplInfo info = impl->info();
  const bool host = info.location == Location::host;
  nlohmann::json r = base_record(w, info, opt, ctx.device, host ? host_hardware_key() : ctx.hardware_key(), host);
  auto finish = [&](const char* outcome, const std::string& reason) {
    r["outcome"] = outcome;
    r["reason"] = reason;
    r["provenance"]["case_seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_case).count();
    out.record = seal_record(std::move(r));
    return std::move(out);
  };

  const DeviceInfo* dev = ctx.device ? &*ctx.device : nullptr;
  const Support sup = impl->check_support(w, dev);
  if (!sup.ok) return finish(kUnsupported, sup.reason);
  if (!host && !dev) return finish(kUnsupported, "needs a CUDA device; none is usable here");
  if (!host) {
    const GateMemory need = gate_memory(w, opt.gate);
    const double gib = 1024.0 * 1024.0 * 1024.0, host_mem = host_memory_bytes();
    if (need.device_bytes > 0.9 * static_cast<double>(dev->memory_bytes))
      return finish(kUnsupported, fmt::format("the harness's gate needs {:.1f} GiB of device memory for this workload "
                                              "(its tensors and the GPU reference checker); the device has {:.1f} GiB",
                                              need.device_bytes / gib, static_cast<double>(dev->memory_bytes) / gib));
    if (host_mem > 0 && need.host_bytes > 0.9 * host_mem)
      return finish(kUnsupported, fmt::format("the harness's gate needs {:.1f} GiB of host memory for this workload "
                                              "(downloaded inputs, y and the checker's y); this machine has {:.1f} GiB",
                                              need.host_bytes / gib, host_mem / gib));
  }

  try {
    const std::uint64_t seed = w.seed.value_or(opt.seed);
    GateOptions gopt = opt.gate;
    gopt.seed = seed;
    impl->initialize(w, dev, host ? nullptr : ctx.stream);
    if (nlohmann::json c = impl->configuration(); !c.is_null()) r["implementation"]["configuration"] = std::move(c);
    std::unique_ptr<CaseBackend> backend =
        host ? make_host_backend(w, *impl, seed) : make_device_backend(w, *impl, ctx.stream, seed);
    Gate gate(w, *backend, gopt, info.tf32);
    StreamProbe probe;
    const std::vector<GateStep> steps = gate.before_timing(probe);
    nlohmann::json corr{{"tolerance", tolerance_for(w.dtype, info.tf32)},
                        {"tf32_declared", info.tf32},
                        {"steps", nlohmann::json::array()},
                        {"stream_probe", probe.to_json()},
                        {"timed_check", nullptr}};
    for (const auto& s : steps) corr["steps"].push_back(s.to_json(w));
    r["correctness"] = corr;
    for (const auto& s : steps)
      if (!s.passed()) return finish(kIncorrect, s.reason());
    if (probe.call_waited)
      r["correctness"]["warnings"] = {"the call waited for the device while the harness held its stream: it "
                                      "synchronizes inside the call"};
    if (opt.verify_only) return finish(kPassed, "");

    // Timing: fresh inputs and a poisoned output before every sample; one timed output, chosen
    // at random among the first min_samples, goes through the gate again.
    std::mt19937_64 pick(seed ^ 0xa0761d6478bd642full);
    TimedCall tc;
    tc.prepare = [&](std::int64_t i) {
      backend->generate(Gate::sample_sets(i));
      backend->poison();
    };
    tc.call = [&] { backend->call(); };
    tc.inspect_at = static_cast<std::int64_t>(pick() % static_cast<std::uint64_t>(std::max<std::int64_t>(1, opt.timing.stop.min_samples)));
    std::optional<GateStep> timed;
    tc.inspect = [&](std::int64_t i) { timed = gate.check_now(fmt::format("timed sample {}", i), Gate::sample_sets(i)); };
    TimingOptions topt = opt.timing;
    if (topt.progress_label.empty()) topt.progress_label = fmt::format("{} {}", info.name, w.name);
    // Other processes with a context on this GPU: time-slicing with them would put their work
    // into these figures, so the record says so (NVML's count includes this process).
    auto processes = [&]() -> std::optional<int> {
      return host ? std::nullopt : nvml_compute_processes(ctx.device->pci_bus_id);
    };
    const std::optional<int> procs_before = processes();
    const TimingResult tr = host ? measure_host(tc, topt) : ctx.timer->measure(tc, ctx.stream, topt);
    const std::optional<int> procs_after = processes();
    r["timing"] = tr.to_json();
    if (procs_before || procs_after) {
      const SharedGpuView shared = shared_gpu_view(procs_before, procs_after);
      r["timing"]["gpu_processes"] = shared.counts;
      if (shared.warning) r["timing"]["warnings"].push_back(*shared.warning);
    }
    if (timed) r["correctness"]["timed_check"] = timed->to_json(w);
    r["floor"] = floor_block(w, info.tf32, host ? std::optional<DeviceInfo>{} : ctx.device,
                             host ? std::optional<MeasuredCeilings>{} : ctx.ceilings, tr.device.median);
    if (timed && !timed->passed()) return finish(kIncorrect, timed->reason());
    if (!timed) return finish(kFailed, "harness: no timed output was checked");
    return finish(kPassed, "");
  } catch (const CudaError& e) {
    out.context_lost = e.sticky();
    return finish(kFailed, e.what());
  } catch (const std::exception& e) {
    return finish(kFailed, e.what());
  }
}

}  // namespace mtabench
