// `mtabench compare BASE NEW`: per case (workload identity, implementation, hardware key) the
// ratio of medians and a noise-aware verdict; exit status 1 when a case is slower (or newly
// failing), 2 on a usage or input error. The model lives in harness/leaderboard/compare.cpp.
#include "harness/cli/commands.h"
#include "harness/leaderboard/compare.h"
#include "harness/leaderboard/merge.h"
#include "harness/storage.h"

#include <fmt/core.h>

#include <filesystem>

namespace mtabench::cli {

namespace {

struct CompareArgs {
  std::string base, next, format = "md", out;
  leaderboard::CompareOptions opt;
};

int execute(CompareArgs& a) {
  for (const auto& p : {a.base, a.next})
    if (!std::filesystem::exists(p)) {
      fmt::print(stderr, "mtabench compare: {}: no such file or folder\n", p);
      return 2;
    }
  const leaderboard::MergedRecords base = leaderboard::read_and_merge({a.base});
  const leaderboard::MergedRecords next = leaderboard::read_and_merge({a.next});
  for (const auto& p : base.problems) fmt::print(stderr, "mtabench compare: BASE: skipped: {}\n", p);
  for (const auto& p : next.problems) fmt::print(stderr, "mtabench compare: NEW: skipped: {}\n", p);
  if (base.records.empty() || next.records.empty()) {
    fmt::print(stderr, "mtabench compare: no valid records in {}\n", base.records.empty() ? a.base : a.next);
    return 2;
  }
  a.opt.base_paths = {a.base};
  a.opt.new_paths = {a.next};
  const nlohmann::json doc = leaderboard::compare_records(base, next, a.opt);
  const std::string text = a.format == "json" ? doc.dump(2) + "\n" : leaderboard::compare_markdown(doc);
  if (a.out.empty())
    fmt::print("{}", text);
  else
    atomic_write_file(a.out, text);
  const int rc = leaderboard::compare_exit_code(doc);
  if (rc != 0)
    fmt::print(stderr, "mtabench compare: {} slower and {} failing case(s) beyond ±{:g}%\n",
               doc["summary"]["slower"].get<int>(), doc["summary"]["failing"].get<int>(),
               a.opt.threshold_pct);
  return rc;
}

}  // namespace

void add_compare(CLI::App& app, AppContext& ctx) {
  auto a = std::make_shared<CompareArgs>();
  auto* sub = app.add_subcommand("compare", "Compare two record sets case by case; exit 1 on a regression");
  sub->footer(
      "Cases match by (workload identity, implementation, hardware key). Per case the ratio of medians "
      "NEW/BASE and a verdict from the samples: slower/faster (significant and beyond --threshold), same "
      "(within --threshold), unsure (beyond it, not significant), failing (passed before, not now), added, "
      "removed. Exit status 0; 1 when a case is slower or failing; 2 on input errors.");
  sub->add_option("base", a->base, "BASE records: a file (.jsonl, .json) or folder")->required();
  sub->add_option("new", a->next, "NEW records: a file (.jsonl, .json) or folder")->required();
  sub->add_option("--threshold", a->opt.threshold_pct, "Percent: smaller changes are 'same'")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--alpha", a->opt.alpha, "Significance level of the tests")
      ->capture_default_str()
      ->check(CLI::Range(1e-9, 0.5));
  sub->add_option("--format", a->format, "md (Markdown) or json")
      ->capture_default_str()
      ->check(CLI::IsMember({"md", "json"}));
  sub->add_option("--out", a->out, "Write the report here instead of to standard output");
  sub->callback([&ctx, a] { ctx.rc = execute(*a); });
}

}  // namespace mtabench::cli
