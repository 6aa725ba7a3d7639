#include "harness/leaderboard/rules.h"

#include "harness/leaderboard/significance.h"

#include <fmt/core.h>

namespace mtabench::leaderboard {

std::vector<std::string> rule_statements(const Rules& r) {
  return {
      "A board is one (workload identity, hardware key). The workload identity is the sha256 of the "
      "canonical JSON of {semantics, k, seq, batch, heads_in, heads_out, dtype}; the hardware key is the "
      "GPU name, SM count, memory size and power limit (plus the environment label of reported records).",
      fmt::format(
          "Eligible record: outcome passed; trust measured (or reproduced); not below its floor (a median "
          "under the headroom-v2 floor from ceilings measured in the same run is impossible); coefficient "
          "of variation of the samples under {:g}%; not measured on a shared GPU (the record's NVML count of "
          "processes holding a CUDA context on the GPU, before or after its measurement, above one).",
          r.max_cv * 100),
      "Reported records (copied from a source, cited in trust.source) are shown and marked, and are never "
      "the record.",
      fmt::format(
          "Faster beyond noise: with raw samples on both sides (at least {} each), a two-sided "
          "Mann-Whitney U test (normal approximation, tie and continuity corrections) gives p < {:g}; "
          "without them, the two 95% confidence intervals of the median (order statistics) do not "
          "overlap; and in both cases the medians differ by more than {:g}%.",
          kMinSamplesForRankTest, r.alpha, r.noise_pct),
      "Record history: eligible records are taken in timestamp order; the first becomes the holder; a "
      "later record takes the record only when it is faster than the holder beyond noise, otherwise the "
      "holder stays (a faster record within noise is listed as 'held'). The current record is the holder "
      "at the end, so it is the lowest median except where a lower one was within noise of the holder.",
      "Reproduced: an implementation's entry (its best eligible record) is reproduced when another "
      "eligible measured record of the same implementation on the same board, from a different run "
      "(run_id), agrees with it: the two are not different beyond noise.",
      fmt::format("Stale: an entry whose last record was observed more than {:g} days before {} (the "
                  "leaderboard's reference time).",
                  r.stale_days, r.now_utc),
      "Records are merged by record_sha256: a record read twice counts once, so merging shards or "
      "rerunning the leaderboard over the same files changes nothing. Records whose hash or schema does "
      "not match are rejected and listed as input problems.",
      "Times are medians of the record's protocol (mtabench-median-v1: one call between CUDA events after "
      "an L2 flush, fresh inputs per sample; reported records: the source's protocol). p20-p80 are the "
      "20th and 80th percentiles, n the number of samples.",
      "Floor: headroom-v2 (SPEC §5: causal bytes over bandwidth, FLOPs over the fastest unit, one exp per "
      "score, one launch; the largest term), from ceilings measured in the run when the record has them, "
      "else from the datasheet table. × floor = median / floor. headroom-v1 (every declared tensor once "
      "at datasheet bandwidth) is shown for comparison with the public page.",
      fmt::format(
          "Entries are ranked: the record first, then eligible and reported entries by median; ineligible "
          "entries are listed unranked with their reason. Fastest by language: per language the "
          "best-ranked eligible entry, or the fastest reported entry (marked) where a language has no "
          "eligible one. 'vs #1' divides an entry's median by the first's; 'vs baseline' divides the "
          "median of the implementation named \"{}\" on the same board by the entry's (above 1: faster "
          "than the baseline).",
          r.baseline),
      "Scaling by seq: per (hardware, implementation, workload family = the identity fields except seq), "
      "each entry's median against seq, with the headroom-v2 floor curve, on log-log axes.",
  };
}

nlohmann::json rules_json(const Rules& r) {
  return {{"max_cv", r.max_cv},
          {"stale_days", r.stale_days},
          {"noise_pct", r.noise_pct},
          {"alpha", r.alpha},
          {"now_utc", r.now_utc},
          {"baseline", r.baseline},
          {"min_samples_for_rank_test", kMinSamplesForRankTest},
          {"statements", rule_statements(r)}};
}

}  // namespace mtabench::leaderboard
