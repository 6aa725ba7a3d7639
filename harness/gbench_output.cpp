#include "harness/gbench_output.h"

#include <benchmark/benchmark.h>

#include <sstream>

namespace mtabench {

std::string records_to_gbench_json(const std::vector<nlohmann::json>& records) {
  using Run = benchmark::BenchmarkReporter::Run;
  std::vector<Run> runs;
  std::int64_t family = 0;
  for (const auto& r : records) {
    if (r["outcome"] != "passed" || !r["timing"].is_object()) continue;
    const std::string name = r["implementation"]["name"].get<std::string>() + "/" + r["workload"]["name"].get<std::string>();
    const auto& t = r["timing"];
    const auto& d = t["device"];
    const auto& h = t["host_inclusive"];
    auto make = [&](double real_s, double cpu_s) {
      Run run;
      run.run_name.function_name = name;
      run.family_index = family;
      run.per_family_instance_index = 0;
      run.iterations = 1;
      run.threads = 1;
      run.time_unit = benchmark::kMicrosecond;
      run.real_accumulated_time = real_s;  // device time, seconds
      run.cpu_accumulated_time = cpu_s;    // host-inclusive time of the same call, seconds
      return run;
    };
    const bool have_samples = t.contains("samples_s");
    const std::int64_t reps = have_samples ? static_cast<std::int64_t>(t["samples_s"].size()) : 1;
    if (have_samples) {
      for (std::size_t i = 0; i < t["samples_s"].size(); ++i) {
        Run run = make(t["samples_s"][i].get<double>(), t["host_samples_s"][i].get<double>());
        run.repetition_index = static_cast<std::int64_t>(i);
        run.repetitions = reps;
        runs.push_back(run);
      }
    }
    for (const auto& [agg, key] : {std::pair{"median", "median_s"}, {"mean", "mean_s"}, {"stddev", "stdev_s"}}) {
      Run run = make(d[key].get<double>(), h[key].get<double>());
      run.run_type = Run::RT_Aggregate;
      run.aggregate_name = agg;
      run.aggregate_unit = benchmark::StatisticUnit::kTime;
      run.repetitions = reps;
      run.iterations = reps;
      // Aggregates report the per-iteration value; iterations == repetitions keeps it so.
      run.real_accumulated_time *= static_cast<double>(reps);
      run.cpu_accumulated_time *= static_cast<double>(reps);
      runs.push_back(run);
    }
    ++family;
  }
  std::ostringstream os, err;
  benchmark::JSONReporter rep;
  rep.SetOutputStream(&os);
  rep.SetErrorStream(&err);
  benchmark::BenchmarkReporter::Context ctx;
  rep.ReportContext(ctx);
  rep.ReportRuns(runs);
  rep.Finalize();
  return os.str();
}

}  // namespace mtabench
