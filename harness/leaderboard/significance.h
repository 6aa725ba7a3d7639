#pragma once
// Telling two timings apart (SPEC §7 "faster beyond noise", `compare`'s verdicts). With raw
// samples on both sides: a two-sided Mann-Whitney U test and a bootstrap interval of the ratio of
// medians. Without them: the records' 95% confidence intervals of the median (order statistics,
// mtabench-median-v1), which differ significantly when they do not overlap.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mtabench::leaderboard {

// The timing figures of one record that the comparisons use.
struct TimingView {
  double median_s = 0;
  std::optional<double> ci_low_s, ci_high_s;  // 95% CI of the median
  std::optional<double> cv, p20_s, p80_s;
  std::optional<std::int64_t> n;
  std::vector<double> samples_s;  // raw samples, when the run kept them (--samples)
  std::string protocol, mode;
};
// From a record's "timing" block; nullopt when it has none (or no median).
std::optional<TimingView> timing_view(const nlohmann::json& record);

struct MannWhitney {
  double u = 0;  // U of the first sample
  double z = 0;  // normal approximation, continuity- and tie-corrected
  double p_two_sided = 1;
};
// Two-sided test, normal approximation with tie correction and continuity correction (what
// scipy.stats.mannwhitneyu(method="asymptotic") computes). p = 1 when every value is tied.
MannWhitney mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b);

// Percentile bootstrap interval of median(next) / median(base): `resamples` independent resamples
// of each side, fixed seed (outputs are reproducible and golden-testable).
struct Interval {
  double low = 0, high = 0;
};
Interval bootstrap_median_ratio(const std::vector<double>& base, const std::vector<double>& next,
                                double confidence = 0.95, int resamples = 1000,
                                std::uint64_t seed = 0x6d7461);

// The MWU normal approximation is poor below this many samples per side; fewer: use the CIs.
inline constexpr std::size_t kMinSamplesForRankTest = 8;

// How `next` differs from `base`.
struct Difference {
  double ratio = 1;                             // median(next) / median(base)
  std::optional<double> ratio_low, ratio_high;  // 95% interval of the ratio, when known
  bool significant = false;                     // statistically distinguishable at `alpha`
  std::optional<double> p_value;                // Mann-Whitney, when raw samples were used
  std::string method;                           // "mann-whitney-u", "median-ci", "no-spread"
};
Difference compare_timings(const TimingView& base, const TimingView& next, double alpha = 0.05);

}  // namespace mtabench::leaderboard
