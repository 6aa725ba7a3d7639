#pragma once
// Statistics of timing samples and the stop rule of mtabench-median-v1 (SPEC §3). Pure
// functions, tested on known and synthetic samples without a GPU.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace mtabench {

// Linear-interpolation quantile (numpy's default, torch.quantile's, so Triton's do_bench
// quantiles [0.2, 0.8] mean the same thing here). `sorted` must be sorted ascending.
double quantile_sorted(const std::vector<double>& sorted, double q);

// Distribution-free confidence interval of the median from order statistics: the widest pair
// (x_(l), x_(n+1-l)) with P(l <= rank of median interval) >= conf under Binomial(n, 1/2).
// Returns 1-based ranks {l, u}; {0, 0} when n is too small for the requested confidence.
std::pair<std::int64_t, std::int64_t> median_ci_ranks(std::int64_t n, double conf = 0.95);

struct Summary {
  std::int64_t n = 0;
  double median = 0, p20 = 0, p80 = 0, min = 0, max = 0, mean = 0, stdev = 0, cv = 0;
  double ci_low = 0, ci_high = 0;  // 95% CI of the median (order statistics)
  double ci_rel_halfwidth = 0;     // (ci_high - ci_low) / 2 / median; inf when n is too small
};
Summary summarize(std::vector<double> samples);

struct StopRule {
  std::int64_t min_samples = 10;
  double min_time_s = 0.5;        // seconds of measuring (wall time of the sampling phase)
  double max_time_s = 10.0;       // per-case time limit
  double target_ci_rel = 0.005;   // half-width of the median's 95% CI, relative
};

enum class StopReason { keep_going, converged, time_limit };
const char* stop_reason_name(StopReason r);

// Decides after a sample. `samples` are the accepted samples so far; `elapsed_s` the wall time
// of the sampling phase. Sorting is the caller's cost: StopChecker below limits how often.
StopReason stop_decision(const StopRule& rule, const std::vector<double>& samples, double elapsed_s);

// Evaluates stop_decision on a geometric schedule (every sample up to 64, then every ~3% more),
// so a long run costs O(n log^2 n) rather than O(n^2 log n); the time limit is checked always.
class StopChecker {
 public:
  explicit StopChecker(StopRule rule) : rule_(rule) {}
  StopReason after_sample(const std::vector<double>& samples, double elapsed_s);
  const StopRule& rule() const { return rule_; }

 private:
  StopRule rule_;
  std::size_t next_check_ = 0;
};

// Throttle filter: a sample whose SM clock was under `fraction` of the default clock is
// discarded (and counted) rather than reported.
inline bool throttled(double clock_mhz, double default_mhz, double fraction = 0.75) {
  return default_mhz > 0 && clock_mhz > 0 && clock_mhz < fraction * default_mhz;
}

}  // namespace mtabench
