// Runs `mtabench_adversarial run` over the cheats and asserts, from the records it writes, that
// every cheat ends with the outcome and the cause it must (SPEC §4, issue 4), that the suite goes
// on after a crash and a hang (the reference's later records pass, every record is written), and
// that the suite's exit code says some case did not pass.
//
//   AdversarialHost.*  host cheats + reference-cpu on workloads/cpu.json (ctest label adversarial)
//   AdversarialGpu.*   device cheats + reference on workloads/gpu.json (ctest label gpu; skipped
//                      where no GPU is usable)
//
// MTABENCH_ADVERSARIAL_KEEP=DIR keeps each run's records and log in DIR.
#include "harness/device.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <vector>

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Expect {
  const char* impl;
  const char* workload; // "*": any workload without an entry of its own
  const char* outcome;
  const char* reason; // ECMAScript regex searched in record["reason"]; "" must be empty
};

struct SuiteRun {
  int exit_code = -1;
  std::vector<json> records; // in the order the suite appended them
  std::string log;           // the CLI's stdout and stderr
};

std::string quoted(const std::string& s) {
  return "'" + s + "'";
}

SuiteRun run_suite_cli(const std::string& workloads, const std::vector<std::string>& impls,
                       double case_timeout, double max_time) {
  std::string tmpl = (fs::temp_directory_path() / "mtabench-adversarial-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  const fs::path tmp = tmpl;
  std::string list;
  for (const auto& i : impls)
    list += (list.empty() ? "" : ",") + i;
  const std::string cmd = quoted(MTABENCH_ADVERSARIAL_EXE) + " run " + quoted(workloads) + " --impl " + list +
                          " --case-timeout " + std::to_string(case_timeout) + " --max-time " +
                          std::to_string(max_time) + " --out " + quoted(tmp.string()) + " > " +
                          quoted((tmp / "log.txt").string()) + " 2>&1";
  SuiteRun r;
  const int status = std::system(cmd.c_str());
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  {
    std::ifstream in(tmp / "log.txt");
    std::stringstream ss;
    ss << in.rdbuf();
    r.log = "$ " + cmd + "\n" + ss.str();
  }
  if (fs::exists(tmp / "runs"))
    for (const auto& f : fs::directory_iterator(tmp / "runs")) {
      std::ifstream in(f.path());
      for (std::string line; std::getline(in, line);)
        if (!line.empty()) r.records.push_back(json::parse(line));
    }
  std::error_code ec;
  // MTABENCH_ADVERSARIAL_KEEP=DIR keeps the records and the log there (to look at them after a run).
  if (const char* keep = std::getenv("MTABENCH_ADVERSARIAL_KEEP")) {
    fs::create_directories(keep);
    fs::copy(tmp, keep, fs::copy_options::recursive | fs::copy_options::overwrite_existing, ec);
  }
  fs::remove_all(tmp, ec);
  return r;
}

std::string workload_of(const json& r) {
  return r["workload"]["name"].get<std::string>();
}
std::string impl_of(const json& r) {
  return r["implementation"]["name"].get<std::string>();
}

// The checks both tests make. `reference` is the implementation that must pass everywhere, also
// in the cases that follow `crash` and `hang` in the suite.
void check_suite(const SuiteRun& run, const std::vector<Expect>& expects,
                 const std::vector<std::string>& workloads, const std::string& reference,
                 const std::string& crash, const std::string& hang) {
  std::cout << run.log << std::flush; // the suite's table: shown by ctest --output-on-failure
  // Some cases did not pass: the suite says so in its exit code.
  EXPECT_EQ(run.exit_code, 3);

  std::set<std::string> impls;
  for (const auto& e : expects)
    impls.insert(e.impl);
  // Every (implementation, workload) has exactly one record: a crash or a hang stopped nothing.
  std::map<std::pair<std::string, std::string>, int> seen;
  for (const auto& r : run.records)
    ++seen[{impl_of(r), workload_of(r)}];
  EXPECT_EQ(run.records.size(), impls.size() * workloads.size());
  for (const auto& i : impls)
    for (const auto& w : workloads)
      EXPECT_EQ((seen[{i, w}]), 1) << i << " on " << w;

  for (const auto& r : run.records) {
    const std::string impl = impl_of(r), wl = workload_of(r);
    const Expect* e = nullptr;
    for (const auto& x : expects)
      if (impl == x.impl && (wl == x.workload || (std::string(x.workload) == "*" && !e))) e = &x;
    ASSERT_NE(e, nullptr) << "no expectation for " << impl << " on " << wl;
    const std::string reason = r["reason"].get<std::string>();
    SCOPED_TRACE(impl + " on " + wl + ": " + r["outcome"].get<std::string>() + " (" + reason + ")");
    EXPECT_EQ(r["outcome"].get<std::string>(), e->outcome);
    if (std::string(e->reason).empty())
      EXPECT_EQ(reason, "");
    else
      EXPECT_TRUE(std::regex_search(reason, std::regex(e->reason)))
          << "reason does not match /" << e->reason << "/";
    if (std::string(e->outcome) == "incorrect") {
      // The gate's steps are in the record, and the last one is the one that failed.
      ASSERT_TRUE(r["correctness"].is_object());
      const json& last = r["correctness"]["steps"].back();
      EXPECT_FALSE(last["passed"].get<bool>());
    }
  }

  // The reference passes in the cases that ran after the first crash and the first hang.
  auto first = [&](const std::string& impl) {
    for (std::size_t k = 0; k < run.records.size(); ++k)
      if (impl_of(run.records[k]) == impl) return k;
    return run.records.size();
  };
  for (const std::string& bad : {crash, hang}) {
    int later = 0;
    for (std::size_t k = first(bad) + 1; k < run.records.size(); ++k)
      if (impl_of(run.records[k]) == reference) {
        ++later;
        EXPECT_EQ(run.records[k]["outcome"].get<std::string>(), "passed") << reference << " after " << bad;
      }
    EXPECT_GT(later, 0) << "no " << reference << " case ran after " << bad;
  }
}

// The mutation check names the inputs in the record's correctness steps too.
void check_mutation_named(const SuiteRun& run, const std::string& impl) {
  for (const auto& r : run.records) {
    if (impl_of(r) != impl) continue;
    SCOPED_TRACE(impl + " on " + workload_of(r));
    ASSERT_TRUE(r["correctness"].is_object());
    EXPECT_EQ(r["correctness"]["steps"].back()["mutated_inputs"], json({"scores", "weight", "bias"}));
  }
}

std::vector<std::string> impls_of(const std::vector<Expect>& expects) {
  std::vector<std::string> out;
  for (const auto& e : expects)
    if (std::find(out.begin(), out.end(), e.impl) == out.end()) out.push_back(e.impl);
  return out;
}

// Causes as the gate words them (harness/check.cpp, harness/gate.cu).
constexpr const char* kUnwritten =
    "^first call: output left unwritten: [0-9]+ elements still hold the poison pattern";
constexpr const char* kStaleFirst = "^first call: relative L2 error .* over the tolerance";
constexpr const char* kStaleWeights =
    "^weights changed, scores unchanged: relative L2 error .* over the tolerance";
constexpr const char* kMutated = "^first call: inputs modified by the implementation: scores, weight, bias$";
constexpr const char* kMasked = "^first call: masked region \\(j > i\\) not exactly zero at [0-9]+ elements";
constexpr const char* kFp32Tolerance = "^first call: relative L2 error .* over the tolerance 1e-05";
constexpr const char* kAnyGateCause =
    "^first call: (output left unwritten|NaN/Inf in the output|masked region|relative L2 error)";
constexpr const char* kFp32Only = "fp32 workloads only";
constexpr const char* kOtherStream =
    "^first call: work ran outside the harness's stream: [0-9]+ output elements";
constexpr const char* kTimedOut = "^no result: killed after [0-9]+ s \\(the case time limit\\)";

TEST(AdversarialHost, EveryCheatIsCaughtAndTheSuiteGoesOn) {
  const std::vector<std::string> workloads = {"adv-seed", "adv-fp32", "adv-k5-fp16"};
  const std::vector<Expect> expects = {
      {"reference-cpu", "*", "passed", ""},
      {"adv-host-nowrite", "*", "incorrect", kUnwritten},
      {"adv-host-cache-ptr", "*", "incorrect", kStaleFirst},
      {"adv-host-cache-hash", "*", "incorrect", kStaleWeights},
      {"adv-host-zero-inputs", "*", "incorrect", kMutated},
      {"adv-host-upper-garbage", "*", "incorrect", kMasked},
      {"adv-host-fp16-accum", "adv-fp32", "incorrect", kFp32Tolerance},
      {"adv-host-fp16-accum", "*", "unsupported", kFp32Only},
      {"adv-host-seed-only", "adv-seed", "passed", ""},
      {"adv-host-seed-only", "*", "incorrect", kAnyGateCause},
      {"adv-host-crash", "*", "failed", "^the case's process ended without a record: killed by signal 11"},
      {"adv-host-hang", "*", "timeout", kTimedOut},
  };
  const SuiteRun run = run_suite_cli(std::string(MTABENCH_ADVERSARIAL_DIR) + "/workloads/cpu.json",
                                     impls_of(expects), 10, 0.2);
  check_suite(run, expects, workloads, "reference-cpu", "adv-host-crash", "adv-host-hang");
  check_mutation_named(run, "adv-host-zero-inputs");
}

TEST(AdversarialGpu, EveryCheatIsCaughtAndTheSuiteGoesOn) {
  std::string why;
  if (!mtabench::cuda_device_available(&why)) GTEST_SKIP() << why;
  const std::vector<std::string> workloads = {"adv-seed", "adv-fp32", "adv-k5-bf16"};
  const std::vector<Expect> expects = {
      {"reference", "*", "passed", ""},
      {"adv-nowrite", "*", "incorrect", kUnwritten},
      {"adv-cache-ptr", "*", "incorrect", kStaleFirst},
      {"adv-cache-hash", "*", "incorrect", kStaleWeights},
      {"adv-zero-inputs", "*", "incorrect", kMutated},
      {"adv-other-stream", "*", "incorrect", kOtherStream},
      {"adv-fork-nojoin", "*", "incorrect", kOtherStream},
      {"adv-upper-garbage", "*", "incorrect", kMasked},
      {"adv-fp16-accum", "adv-fp32", "incorrect", kFp32Tolerance},
      {"adv-fp16-accum", "*", "unsupported", kFp32Only},
      {"adv-seed-only", "adv-seed", "passed", ""},
      {"adv-seed-only", "*", "incorrect", kAnyGateCause},
      {"adv-spin", "*", "timeout", kTimedOut},
      {"adv-oob", "*", "failed", "cudaErrorIllegalAddress"},
  };
  const SuiteRun run = run_suite_cli(std::string(MTABENCH_ADVERSARIAL_DIR) + "/workloads/gpu.json",
                                     impls_of(expects), 20, 0.3);
  check_suite(run, expects, workloads, "reference", "adv-oob", "adv-spin");
  check_mutation_named(run, "adv-zero-inputs");
}

} // namespace
