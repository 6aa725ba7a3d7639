#pragma once
// The bounds of "how records are decided" (SPEC §7). Every one of them is printed with the
// leaderboard, in leaderboard.json ("rules") and in the Markdown and HTML pages.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace mtabench::leaderboard {

struct Rules {
  double max_cv = 0.05;    // eligible only with a coefficient of variation under this
  double stale_days = 30;  // an entry last observed longer ago than this is marked stale
  double noise_pct = 1.0;  // a difference smaller than this (relative, %) is noise even when significant
  double alpha = 0.05;     // significance level of the tests
  std::string now_utc;     // reference time of the stale marks, YYYY-MM-DDTHH:MM:SSZ
  std::string baseline = "pytorch";  // implementation the "× vs baseline" figures refer to
};

// The rules as sentences, in the order the pages print them.
std::vector<std::string> rule_statements(const Rules& r);
nlohmann::json rules_json(const Rules& r);

}  // namespace mtabench::leaderboard
