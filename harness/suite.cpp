#include "harness/suite.h"

#include "harness/cuda_check.h"
#include "harness/gbench_output.h"
#include "harness/isolate.h"
#include "harness/json_strict.h"
#include "harness/provenance.h"
#include "harness/record.h"
#include "harness/storage.h"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <mutex>
#include <thread>

namespace mtabench {

namespace fs = std::filesystem;

namespace {

nlohmann::json timing_options_json(const TimingOptions& t) {
  return {{"min_samples", t.stop.min_samples}, {"min_time_s", t.stop.min_time_s}, {"max_time_s", t.stop.max_time_s},
          {"target_ci_rel", t.stop.target_ci_rel}, {"min_warmup_calls", t.min_warmup_calls},
          {"min_warmup_s", t.min_warmup_s}, {"graph", t.graph}, {"keep_samples", t.keep_samples},
          {"throttle_fraction", t.throttle_fraction}};
}
TimingOptions timing_options_from(const nlohmann::json& j) {
  TimingOptions t;
  t.stop.min_samples = j.at("min_samples").get<std::int64_t>();
  t.stop.min_time_s = j.at("min_time_s").get<double>();
  t.stop.max_time_s = j.at("max_time_s").get<double>();
  t.stop.target_ci_rel = j.at("target_ci_rel").get<double>();
  t.min_warmup_calls = j.at("min_warmup_calls").get<std::int64_t>();
  t.min_warmup_s = j.at("min_warmup_s").get<double>();
  t.graph = j.at("graph").get<bool>();
  t.keep_samples = j.at("keep_samples").get<bool>();
  t.throttle_fraction = j.at("throttle_fraction").get<double>();
  return t;
}

Workload workload_from_json(const nlohmann::json& j) {
  nlohmann::json doc = j;
  const std::string source = doc.value("source", "");
  doc.erase("source");
  doc.erase("identity");
  Workload w = workloads_from_json(doc, source.empty() ? "<case spec>" : source).at(0);
  w.source = source;
  return w;
}

struct Case {
  const Workload* w;
  const RegistryEntry* impl;
};

std::string one_line(const nlohmann::json& r) {
  const std::string outcome = r["outcome"].get<std::string>();
  std::string s = fmt::format("{:<14} {:<28} {}", r["implementation"]["name"].get<std::string>(),
                              r["workload"]["name"].get<std::string>(), outcome);
  if (outcome == kPassed && r["timing"].is_object()) {
    s += fmt::format("  median {:.2f} us (n={}, {})", r["timing"]["device"]["median_s"].get<double>() * 1e6,
                     r["timing"]["device"]["n"].get<std::int64_t>(), r["timing"]["stop_reason"].get<std::string>());
    if (r["floor"].is_object() && r["floor"]["time_over_floor"].is_number())
      s += fmt::format("  {:.2f}x floor", r["floor"]["time_over_floor"].get<double>());
  } else if (outcome != kPassed) {
    std::string reason = r["reason"].get<std::string>();
    if (reason.size() > 140) reason = reason.substr(0, 137) + "...";
    s += ": " + reason;
  }
  return s;
}

}  // namespace

std::string results_table(const std::vector<nlohmann::json>& records, bool timing) {
  std::string t;
  if (timing)
    t += "Device times: mtabench-median-v1 (one call between CUDA events after an L2 flush, fresh inputs each "
         "sample; host implementations: wall time). x floor = median / headroom-v2 floor with this run's measured "
         "copy bandwidth and launch time.\n";
  t += fmt::format("{:<28} {:<14} {:<11} {:>11} {:>21} {:>6} {:>6} {:>10} {:>11} {:>8}  {}\n", "workload", "impl",
                   "outcome", "median us", "p20-p80 us", "CV%", "n", "stop", "floor us", "x floor", "check");
  for (const auto& r : records) {
    const std::string outcome = r["outcome"].get<std::string>();
    std::string med = "-", q = "-", cv = "-", n = "-", stop = "-", fl = "-", xf = "-", check = "-";
    if (r["timing"].is_object()) {
      const auto& d = r["timing"]["device"];
      med = fmt::format("{:.3f}", d["median_s"].get<double>() * 1e6);
      q = fmt::format("{:.2f}-{:.2f}", d["p20_s"].get<double>() * 1e6, d["p80_s"].get<double>() * 1e6);
      cv = fmt::format("{:.2f}", d["cv"].get<double>() * 100);
      n = std::to_string(d["n"].get<std::int64_t>());
      stop = r["timing"]["stop_reason"].get<std::string>();
    }
    if (r["floor"].is_object() && r["floor"]["headroom_v2"]["measured"].is_object()) {
      fl = fmt::format("{:.3f}", r["floor"]["headroom_v2"]["measured"]["seconds"].get<double>() * 1e6);
      if (r["floor"]["time_over_floor"].is_number()) xf = fmt::format("{:.2f}", r["floor"]["time_over_floor"].get<double>());
    }
    if (r["correctness"].is_object() && !r["correctness"]["steps"].empty()) {
      const auto& c = r["correctness"]["steps"].back()["check"];
      check = fmt::format("rel_l2 {:.1e}", c["rel_l2"].get<double>());
    }
    if (outcome != kPassed) {
      std::string reason = r["reason"].get<std::string>();
      if (reason.size() > 90) reason = reason.substr(0, 87) + "...";
      check = reason;
    }
    t += fmt::format("{:<28} {:<14} {:<11} {:>11} {:>21} {:>6} {:>6} {:>10} {:>11} {:>8}  {}\n",
                     r["workload"]["name"].get<std::string>(), r["implementation"]["name"].get<std::string>(), outcome,
                     med, q, cv, n, stop, fl, xf, check);
  }
  return t;
}

int child_probe(int device, const std::string& out_file) {
  try {
    MTABENCH_CUDA_CALL(cudaSetDevice(device));
    const DeviceInfo d = query_device(device);
    cudaStream_t s;
    MTABENCH_CUDA_CALL(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    const MeasuredCeilings m = measure_ceilings(d, s);
    atomic_write_file(out_file, nlohmann::json{{"device", d.to_json()}, {"ceilings", m.to_json()}}.dump(2));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mtabench: device probe failed: %s\n", e.what());
    return 1;
  }
}

int child_case(const std::string& spec_file, const std::string& out_file, const Registry& reg) {
  const nlohmann::json spec = read_json_file_strict(spec_file);
  const Workload w = workload_from_json(spec.at("workload"));
  const RegistryEntry* e = find_impl(reg, spec.at("impl").get<std::string>());
  if (!e) throw std::runtime_error("unknown implementation " + spec.at("impl").get<std::string>());
  RunOptions opt;
  const auto& ro = spec.at("run");
  opt.seed = ro.at("seed").get<std::uint64_t>();
  opt.verify_only = ro.at("verify_only").get<bool>();
  opt.run_id = ro.at("run_id").get<std::string>();
  opt.command_line = ro.at("command_line").get<std::string>();
  opt.timing = timing_options_from(ro.at("timing"));
  opt.gate.oracle_full_max_macs = ro.at("oracle_full_max_macs").get<double>();
  opt.gate.sampled_rows = ro.at("sampled_rows").get<int>();
  CaseContext ctx;
  const bool host_impl = e->make()->info().location == Location::host;
  if (spec.at("device").is_number_integer() && !host_impl) {
    const int d = spec["device"].get<int>();
    MTABENCH_CUDA_CALL(cudaSetDevice(d));
    ctx.device = query_device(d);
    if (spec.contains("ceilings") && spec["ceilings"].is_object()) ctx.ceilings = MeasuredCeilings::from_json(spec["ceilings"]);
    MTABENCH_CUDA_CALL(cudaStreamCreateWithFlags(&ctx.stream, cudaStreamNonBlocking));
    ctx.timer = std::make_unique<DeviceTimer>(ctx.device->l2_bytes, ctx.device->max_sm_clock_mhz);
  }
  const CaseResult cr = run_case(w, *e, opt, ctx);
  atomic_write_file(out_file, cr.record.dump());
  if (cr.context_lost) std::_Exit(0);  // the context is gone: skip CUDA teardown, which could hang
  return 0;
}

SuiteResult run_suite(const std::vector<Workload>& workloads, const Registry& reg, const SuiteOptions& opt) {
  SuiteResult res;
  std::string why;
  const bool gpu = cuda_device_available(&why);
  for (const auto& name : opt.impls)
    if (!find_impl(reg, name)) throw std::runtime_error("unknown implementation \"" + name + "\" (see `mtabench list`)");
  std::vector<const RegistryEntry*> impls;
  for (const auto& e : reg)
    if (opt.impls.empty() || std::find(opt.impls.begin(), opt.impls.end(), std::string(e.name)) != opt.impls.end())
      impls.push_back(&e);
  // Cases in a fixed order, and a shard takes every N-th, before anything depends on this
  // machine: every node of a sharded run enumerates the same list.
  std::vector<Case> cases;
  std::size_t idx = 0;
  for (const auto& w : workloads)
    for (const auto* e : impls)
      if (static_cast<int>(idx++ % static_cast<std::size_t>(opt.shard_count)) == opt.shard_index) cases.push_back({&w, e});
  if (!gpu) {
    fmt::print(stderr, "mtabench: no GPU ({}): running the CPU implementations only\n", why);
    cases.erase(std::remove_if(cases.begin(), cases.end(),
                               [](const Case& c) { return c.impl->make()->info().location != Location::host; }),
                cases.end());
  }
  if (!opt.isolate && opt.devices.size() > 1)
    fmt::print(stderr, "mtabench: --no-isolate runs every case in this process, on GPU {} only\n", opt.devices[0]);

  const std::vector<int> devices = opt.devices.empty() ? std::vector<int>{0} : opt.devices;
  const fs::path out(opt.out_dir);
  res.run_file = (out / "runs" / (opt.run.run_id + ".jsonl")).string();
  const fs::path tmpdir = fs::temp_directory_path() / ("mtabench-" + opt.run.run_id);
  fs::create_directories(tmpdir);

  // Device identity and measured ceilings, once per GPU, in a child (it must not die with us).
  std::vector<std::optional<DeviceInfo>> dev_info(devices.size());
  std::vector<nlohmann::json> dev_json(devices.size()), ceil_json(devices.size());
  if (gpu) {
    for (std::size_t k = 0; k < devices.size(); ++k) {
      const std::string pf = (tmpdir / fmt::format("probe-{}.json", devices[k])).string();
      const ChildResult cr = run_self({"__probe", "--device", std::to_string(devices[k]), "--out", pf}, 300);
      if (cr.exit_code != 0 || !fs::exists(pf))
        throw std::runtime_error(fmt::format("probing GPU {} failed ({})", devices[k], cr.describe()));
      const auto pj = read_json_file_strict(pf);
      dev_json[k] = pj["device"];
      ceil_json[k] = pj["ceilings"];
      if (!opt.quiet)
        fmt::print(stderr, "mtabench: GPU {}: {} ({} SMs); measured copy {:.0f} GB/s, empty kernel {:.2f} us\n", devices[k],
                   dev_json[k]["name"].get<std::string>(), dev_json[k]["sm_count"].get<int>(),
                   ceil_json[k]["copy_bytes_per_s"].get<double>() / 1e9, ceil_json[k]["empty_kernel_s"].get<double>() * 1e6);
    }
  }

  std::mutex mu;
  std::atomic<std::size_t> next{0};
  std::size_t done = 0;
  auto record_arrived = [&](nlohmann::json rec) {
    std::lock_guard<std::mutex> lock(mu);
    if (opt.write_records) {
      append_line_durable(res.run_file, rec.dump());
      const std::string key = rec["provenance"]["hardware_key"].get<std::string>();
      append_line_durable(out / "history" / (key + ".jsonl"), rec.dump());
    }
    ++done;
    if (!opt.quiet) fmt::print("[{}/{}] {}\n", done, cases.size(), one_line(rec));
    std::fflush(stdout);
    res.records.push_back(std::move(rec));
  };

  auto spec_for = [&](const Case& c, std::size_t k) {
    nlohmann::json wl = c.w->to_json();
    wl["source"] = c.w->source;
    return nlohmann::json{
        {"workload", wl},
        {"impl", c.impl->name},
        {"device", gpu ? nlohmann::json(devices[k]) : nlohmann::json(nullptr)},
        {"ceilings", gpu ? ceil_json[k] : nlohmann::json(nullptr)},
        {"run", {{"seed", opt.run.seed}, {"verify_only", opt.run.verify_only}, {"run_id", opt.run.run_id},
                 {"command_line", opt.run.command_line}, {"timing", timing_options_json(opt.run.timing)},
                 {"oracle_full_max_macs", opt.run.gate.oracle_full_max_macs}, {"sampled_rows", opt.run.gate.sampled_rows}}}};
  };

  auto device_info_for = [&](std::size_t k) -> std::optional<DeviceInfo> {
    if (!gpu) return std::nullopt;
    DeviceInfo d;  // enough of it for a synthesized record's provenance
    d.name = dev_json[k]["name"].get<std::string>();
    d.uuid = dev_json[k]["uuid"].get<std::string>();
    d.sm_count = dev_json[k]["sm_count"].get<int>();
    d.memory_bytes = dev_json[k]["memory_bytes"].get<std::int64_t>();
    if (dev_json[k]["power_limit_w"].is_number()) d.power_limit_w = dev_json[k]["power_limit_w"].get<double>();
    return d;
  };

  if (opt.isolate) {
    auto worker = [&](std::size_t k) {
      for (;;) {
        const std::size_t i = next++;
        if (i >= cases.size()) return;
        const Case& c = cases[i];
        const std::string sf = (tmpdir / fmt::format("case-{}.json", i)).string();
        const std::string rf = (tmpdir / fmt::format("record-{}.json", i)).string();
        atomic_write_file(sf, spec_for(c, k).dump());
        const ChildResult cr = run_self({"__case", "--spec", sf, "--out", rf}, opt.case_timeout_s);
        nlohmann::json rec;
        bool ok = false;
        if (!cr.timed_out && fs::exists(rf)) {
          try {
            rec = read_json_file_strict(rf);
            ok = check_record_hash(rec).empty();
          } catch (const std::exception&) {
          }
        }
        if (!ok) {
          const bool host = c.impl->make()->info().location == Location::host;
          const auto dinfo = device_info_for(k);
          const std::string hk = host || !dinfo ? host_hardware_key() : dinfo->hardware_key();
          rec = synthesized_record(*c.w, *c.impl, opt.run, host ? std::optional<DeviceInfo>{} : dinfo, hk,
                                   cr.timed_out ? kTimeout : kFailed,
                                   cr.timed_out ? "no result: " + cr.describe()
                                                : "the case's process ended without a record: " + cr.describe());
        }
        record_arrived(std::move(rec));
        fs::remove(sf);
        fs::remove(rf);
      }
    };
    std::vector<std::thread> pool;
    for (std::size_t k = 0; k < (gpu ? devices.size() : 1); ++k) pool.emplace_back(worker, k);
    for (auto& t : pool) t.join();
  } else {
    CaseContext ctx;
    if (gpu) {
      MTABENCH_CUDA_CALL(cudaSetDevice(devices[0]));
      ctx.device = query_device(devices[0]);
      ctx.ceilings = MeasuredCeilings::from_json(ceil_json[0]);
      MTABENCH_CUDA_CALL(cudaStreamCreateWithFlags(&ctx.stream, cudaStreamNonBlocking));
      ctx.timer = std::make_unique<DeviceTimer>(ctx.device->l2_bytes, ctx.device->max_sm_clock_mhz);
    }
    bool lost = false;
    for (const Case& c : cases) {
      const bool host = c.impl->make()->info().location == Location::host;
      if (lost && !host) {
        record_arrived(synthesized_record(*c.w, *c.impl, opt.run, ctx.device, ctx.hardware_key(), kFailed,
                                          "not run: an earlier case left the CUDA context unusable (isolation, the default, avoids this)"));
        continue;
      }
      CaseResult cr = run_case(*c.w, *c.impl, opt.run, ctx);
      lost = lost || cr.context_lost;
      record_arrived(std::move(cr.record));
    }
  }
  std::error_code ec;
  fs::remove_all(tmpdir, ec);

  for (const auto& r : res.records) {
    const std::string o = r["outcome"].get<std::string>();
    if (o != kPassed && o != kUnsupported) res.exit_code = 3;
  }
  if (!opt.gbench_out.empty()) atomic_write_file(opt.gbench_out, records_to_gbench_json(res.records));
  return res;
}

}  // namespace mtabench
