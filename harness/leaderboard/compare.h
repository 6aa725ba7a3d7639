#pragma once
// `mtabench compare BASE NEW`: cases matched by (workload identity, implementation name, hardware
// key); per case the ratio of medians NEW/BASE and a noise-aware verdict.
//   slower / faster: the difference is statistically significant AND beyond the threshold
//   same:            the ratio is within the threshold (significant or not)
//   unsure:          the ratio is beyond the threshold but not significant (too noisy to say)
//   failing:         BASE passed, NEW did not (a correctness or run regression)
//   now-passing, not-timed, added, removed: the rest
// Exit status for CI: 1 when a case is slower or failing, else 0.
#include "harness/leaderboard/merge.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace mtabench::leaderboard {

struct CompareOptions {
  double threshold_pct = 5;
  double alpha = 0.05;
  std::vector<std::string> base_paths, new_paths;  // named in the output
};

nlohmann::json compare_records(const MergedRecords& base, const MergedRecords& next,
                               const CompareOptions& opt);
std::string compare_markdown(const nlohmann::json& doc);
int compare_exit_code(const nlohmann::json& doc);

}  // namespace mtabench::leaderboard
