#pragma once
// Running a suite: cases = workloads x implementations (sharded), each in a child process by
// default, spread over the selected GPUs; every record appended durably as it arrives.
#include "harness/runner.h"
#include "impls/impl.h"

#include <string>
#include <vector>

namespace mtabench {

struct SuiteOptions {
  RunOptions run;
  std::vector<std::string> impls;  // empty: every registered implementation
  std::string out_dir = "results/local";
  bool isolate = true;
  double case_timeout_s = 600;
  std::vector<int> devices;        // GPU ordinals; empty: {0}
  int shard_index = 0, shard_count = 1;
  bool write_records = true;
  std::string gbench_out;          // also write Google Benchmark JSON here
  bool quiet = false;
};

struct SuiteResult {
  std::vector<nlohmann::json> records;
  std::string run_file;  // runs/<run_id>.jsonl
  int exit_code = 0;     // 0: every case passed or was unsupported; 3: some case did not pass
};

SuiteResult run_suite(const std::vector<Workload>& workloads, const Registry& reg, const SuiteOptions& opt);

// The hidden subcommands the parent starts children with.
int child_probe(int device, const std::string& out_file);
int child_case(const std::string& spec_file, const std::string& out_file, const Registry& reg);

// The results table (also used by `verify`).
std::string results_table(const std::vector<nlohmann::json>& records, bool timing);

}  // namespace mtabench
