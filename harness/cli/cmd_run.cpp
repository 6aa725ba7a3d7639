// `mtabench run` (correctness gate + timing + records) and `mtabench verify` (gate only).
#include "harness/cli/commands.h"
#include "harness/device.h"
#include "harness/nvml_probe.h"
#include "harness/provenance.h"
#include "harness/suite.h"
#include "harness/workload.h"

#include <fmt/core.h>

#include <algorithm>
#include <regex>
#include <sstream>

namespace mtabench::cli {

namespace {

constexpr int kExitSharedGpu = 5;

struct RunArgs {
  std::vector<std::string> paths;
  std::string impls;
  std::string out = "results/local";
  std::uint64_t seed = 1;
  double max_time = 10.0, min_time = 0.5, target_ci = 0.005;
  std::int64_t min_samples = 10;
  bool graph = false, samples = false, no_isolate = false, no_records = false, quiet = false;
  bool fail_on_shared_gpu = false;
  double case_timeout = 600;
  std::string devices, shard, format = "table", gbench_out, filter;
};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string x;
  while (std::getline(ss, x, ','))
    if (!x.empty()) out.push_back(x);
  return out;
}

int execute(const RunArgs& a, AppContext& ctx, bool verify) {
  std::string why;
  const bool gpu = cuda_device_available(&why);
  std::vector<std::string> paths = a.paths;
  if (paths.empty()) {
    paths = default_workload_paths(gpu);
    fmt::print(stderr, "mtabench: no workloads given: the default suite ({})\n",
               gpu ? "seed, seq-sweep, shapes" : "the smoke workloads, for the CPU fallback");
  }
  auto ws = load_workloads(paths);
  if (!a.filter.empty()) {
    const std::regex re(a.filter);
    ws.erase(std::remove_if(ws.begin(), ws.end(), [&](const Workload& w) { return !std::regex_search(w.name, re); }),
             ws.end());
    if (ws.empty()) throw std::runtime_error("--filter \"" + a.filter + "\" matches no workload");
  }
  SuiteOptions o;
  o.impls = split(a.impls);
  o.out_dir = a.out;
  o.isolate = !a.no_isolate;
  o.case_timeout_s = a.case_timeout;
  o.write_records = !verify && !a.no_records;
  o.quiet = a.quiet;
  for (const auto& d : split(a.devices)) o.devices.push_back(std::stoi(d));
  if (!a.shard.empty()) {
    const auto slash = a.shard.find('/');
    if (slash == std::string::npos) throw std::runtime_error("--shard takes I/N, e.g. 0/4");
    try {
      o.shard_index = std::stoi(a.shard.substr(0, slash));
      o.shard_count = std::stoi(a.shard.substr(slash + 1));
    } catch (const std::exception&) {
      throw std::runtime_error("--shard takes I/N with two integers, e.g. 0/4; got \"" + a.shard + "\"");
    }
    if (o.shard_count < 1 || o.shard_index < 0 || o.shard_index >= o.shard_count)
      throw std::runtime_error("--shard I/N needs 0 <= I < N");
  }
  if (a.format == "gbench") o.gbench_out = a.gbench_out.empty() ? a.out + "/gbench.json" : a.gbench_out;
  o.run.seed = a.seed;
  o.run.verify_only = verify;
  o.run.run_id = new_run_id();
  o.run.command_line = ctx.command_line;
  o.run.timing.stop.max_time_s = a.max_time;
  o.run.timing.stop.min_time_s = a.min_time;
  o.run.timing.stop.min_samples = a.min_samples;
  o.run.timing.stop.target_ci_rel = a.target_ci;
  o.run.timing.graph = a.graph;
  o.run.timing.keep_samples = a.samples || a.format == "gbench";
  const SuiteResult r = run_suite(ws, ctx.registry, o);
  fmt::print("\n{}", results_table(r.records, !verify));
  if (o.write_records && !r.records.empty()) fmt::print("\nrecords: {} (and {}/history/)\n", r.run_file, a.out);
  if (!o.gbench_out.empty()) fmt::print("Google Benchmark JSON: {}\n", o.gbench_out);
  // Records measured while other processes held the GPU are kept (and marked in the record); a
  // nightly job can make them fail the run, since the leaderboard will not use them.
  int shared = 0;
  for (const auto& rec : r.records)
    if (const int others = other_gpu_processes(rec); others > 0) {
      ++shared;
      fmt::print(stderr, "mtabench: {} / {}: measured on a shared GPU ({} other process(es), NVML)\n",
                 rec["workload"]["name"].get<std::string>(), rec["implementation"]["name"].get<std::string>(), others);
    }
  if (a.fail_on_shared_gpu && shared > 0 && r.exit_code == 0) {
    fmt::print(stderr, "mtabench: --fail-on-shared-gpu: {} case(s) measured on a shared GPU: exit {}\n", shared,
               kExitSharedGpu);
    return kExitSharedGpu;
  }
  return r.exit_code;
}

void options(CLI::App* sub, RunArgs& a, bool verify) {
  sub->add_option("paths", a.paths, "Workload files or folders (default: the default suite)");
  sub->add_option("--impl", a.impls, "Comma-separated implementations (default: all that apply)");
  sub->add_option("--filter", a.filter, "Only workloads whose name matches this regular expression");
  sub->add_option("--seed", a.seed, "Input seed for workloads that do not set one")->capture_default_str();
  sub->add_flag("--no-isolate", a.no_isolate, "Run cases in this process instead of one child process each");
  sub->add_option("--case-timeout", a.case_timeout, "Seconds before an isolated case is killed and recorded as timeout")
      ->capture_default_str();
  sub->add_option("--devices", a.devices, "Comma-separated GPU ordinals to spread cases over (default: 0)");
  sub->add_option("--shard", a.shard, "Run only shard I of N of the cases (I/N, deterministic)");
  sub->add_flag("--quiet", a.quiet, "No per-case lines");
  if (verify) return;
  sub->add_option("--out", a.out, "Results folder (runs/<run>.jsonl and history/<hardware>.jsonl)")->capture_default_str();
  sub->add_option("--max-time", a.max_time, "Per-case time limit of the timing protocol, seconds")->capture_default_str();
  sub->add_option("--min-time", a.min_time, "Minimum seconds of measuring")->capture_default_str();
  sub->add_option("--min-samples", a.min_samples, "Minimum accepted samples")->capture_default_str();
  sub->add_option("--target-ci", a.target_ci, "Stop when the median's 95% CI half-width is within this fraction")
      ->capture_default_str();
  sub->add_flag("--graph", a.graph, "Capture one call in a CUDA graph and time graph launches");
  sub->add_flag("--samples", a.samples, "Keep raw samples in the records");
  sub->add_flag("--no-records", a.no_records, "Do not write records (print the table only)");
  sub->add_flag("--fail-on-shared-gpu", a.fail_on_shared_gpu,
                "Exit 5 when a case was measured while other processes held the GPU (records are still written)");
  sub->add_option("--format", a.format, "Also write: table (default) or gbench (Google Benchmark JSON)")
      ->check(CLI::IsMember({"table", "gbench"}));
  sub->add_option("--gbench-out", a.gbench_out, "Where --format gbench writes (default: OUT/gbench.json)");
}

}  // namespace

void add_run(CLI::App& app, AppContext& ctx) {
  auto ra = std::make_shared<RunArgs>();
  auto* run = app.add_subcommand("run", "Check and time implementations on workloads; write one record per case");
  options(run, *ra, false);
  run->callback([&ctx, ra] { ctx.rc = execute(*ra, ctx, false); });
  auto va = std::make_shared<RunArgs>();
  auto* ver = app.add_subcommand("verify", "The correctness gate only: no timing, no records");
  options(ver, *va, true);
  ver->callback([&ctx, va] { ctx.rc = execute(*va, ctx, true); });
}

}  // namespace mtabench::cli
