// `mtabench leaderboard RESULTS... --out DIR`: current records per (workload, hardware), record
// history, fastest by language, scaling by seq; leaderboard.json, LEADERBOARD.md, index.html.
// The model and writers live in harness/leaderboard/.
#include "harness/cli/commands.h"
#include "harness/leaderboard/format.h"
#include "harness/leaderboard/merge.h"
#include "harness/leaderboard/model.h"
#include "harness/leaderboard/output.h"
#include "harness/provenance.h"

#include <fmt/core.h>

#include <filesystem>

namespace mtabench::cli {

namespace {

struct LeaderboardArgs {
  std::vector<std::string> paths;
  std::string out;
  leaderboard::Rules rules;
  std::string now;
};

int execute(const LeaderboardArgs& a) {
  leaderboard::Rules rules = a.rules;
  rules.now_utc = a.now.empty() ? utc_timestamp() : a.now.size() == 10 ? a.now + "T00:00:00Z" : a.now;
  if (!leaderboard::parse_utc(rules.now_utc)) {
    fmt::print(stderr, "mtabench leaderboard: --now takes YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ, not \"{}\"\n",
               a.now);
    return 2;
  }
  for (const auto& p : a.paths)
    if (!std::filesystem::exists(p)) {
      fmt::print(stderr, "mtabench leaderboard: {}: no such file or folder\n", p);
      return 2;
    }
  const leaderboard::MergedRecords in = leaderboard::read_and_merge(a.paths);
  for (const auto& p : in.problems) fmt::print(stderr, "mtabench leaderboard: skipped: {}\n", p);
  const nlohmann::json doc = leaderboard::build_leaderboard(in, rules);
  const auto written = leaderboard::write_leaderboard_outputs(a.out, doc);
  fmt::print("{} unique record(s) ({} duplicate(s) merged, {} problem(s)); {} board(s), {} eligible run(s)\n",
             in.records.size(), in.duplicates, in.problems.size(), doc["totals"]["boards"].dump(),
             doc["totals"]["eligible_runs"].dump());
  for (const auto& p : written)
    if (p.parent_path().filename() != "plots") fmt::print("wrote {}\n", p.string());
  return 0;
}

}  // namespace

void add_leaderboard(CLI::App& app, AppContext& ctx) {
  auto a = std::make_shared<LeaderboardArgs>();
  auto* sub = app.add_subcommand("leaderboard", "Build the leaderboard (JSON, Markdown, HTML) from records");
  sub->footer(
      "Current record per (workload identity, hardware key) under the stated rules, record history, fastest "
      "by language, scaling by seq. Writes leaderboard.json, LEADERBOARD.md, index.html (self-contained) and "
      "plots/*.svg into --out. Each output states its rules and bounds under \"How records are decided\".");
  sub->add_option("results", a->paths, "Record files (.jsonl, .json) or folders; merged by record_sha256")
      ->required();
  sub->add_option("--out", a->out, "Output folder")->required();
  sub->add_option("--stale-days", a->rules.stale_days,
                  "Mark entries last observed longer ago than this as stale")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--max-cv", a->rules.max_cv,
                  "Eligible only with a coefficient of variation under this (fraction)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  sub->add_option(
         "--noise", a->rules.noise_pct,
         "Percent: a smaller difference between two records is noise even when statistically significant")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--alpha", a->rules.alpha, "Significance level of the Mann-Whitney U test")
      ->capture_default_str()
      ->check(CLI::Range(1e-9, 0.5));
  sub->add_option("--baseline", a->rules.baseline, "Implementation the 'vs baseline' figures compare with")
      ->capture_default_str();
  sub->add_option("--now", a->now,
                  "Reference time of the stale marks, YYYY-MM-DD[THH:MM:SSZ] (default: now, UTC)");
  sub->callback([&ctx, a] { ctx.rc = execute(*a); });
}

}  // namespace mtabench::cli
