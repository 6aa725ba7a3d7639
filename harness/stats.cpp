#include "harness/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace mtabench {

double quantile_sorted(const std::vector<double>& s, double q) {
  if (s.empty()) return std::numeric_limits<double>::quiet_NaN();
  const double pos = q * static_cast<double>(s.size() - 1);
  const std::size_t lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, s.size() - 1);
  return s[lo] + (pos - static_cast<double>(lo)) * (s[hi] - s[lo]);
}

std::pair<std::int64_t, std::int64_t> median_ci_ranks(std::int64_t n, double conf) {
  // Coverage of [x_(l), x_(n+1-l)] is 1 - 2 * P(B <= l - 1), B ~ Binomial(n, 1/2).
  // Find the largest l with 2 * P(B <= l - 1) <= 1 - conf.
  const double alpha_half = (1.0 - conf) / 2.0;
  const double log_half_n = static_cast<double>(n) * std::log(0.5);
  double cdf = 0;
  std::int64_t l = 0;
  for (std::int64_t k = 0; k <= n / 2; ++k) {
    const double log_pmf = std::lgamma(static_cast<double>(n) + 1) - std::lgamma(static_cast<double>(k) + 1) -
                           std::lgamma(static_cast<double>(n - k) + 1) + log_half_n;
    cdf += std::exp(log_pmf);
    if (cdf > alpha_half) break;
    l = k + 1;  // P(B <= k) <= alpha/2, so l = k + 1 keeps the coverage
  }
  if (l < 1) return {0, 0};
  return {l, n + 1 - l};
}

Summary summarize(std::vector<double> x) {
  Summary s;
  s.n = static_cast<std::int64_t>(x.size());
  if (x.empty()) {
    s.ci_rel_halfwidth = std::numeric_limits<double>::infinity();
    return s;
  }
  std::sort(x.begin(), x.end());
  s.median = quantile_sorted(x, 0.5);
  s.p20 = quantile_sorted(x, 0.2);
  s.p80 = quantile_sorted(x, 0.8);
  s.min = x.front();
  s.max = x.back();
  s.mean = std::accumulate(x.begin(), x.end(), 0.0) / static_cast<double>(x.size());
  double ss = 0;
  for (double v : x) ss += (v - s.mean) * (v - s.mean);
  s.stdev = x.size() > 1 ? std::sqrt(ss / static_cast<double>(x.size() - 1)) : 0.0;
  s.cv = s.mean > 0 ? s.stdev / s.mean : 0.0;
  const auto [l, u] = median_ci_ranks(s.n);
  if (l >= 1) {
    s.ci_low = x[static_cast<std::size_t>(l - 1)];
    s.ci_high = x[static_cast<std::size_t>(u - 1)];
    s.ci_rel_halfwidth = s.median > 0 ? (s.ci_high - s.ci_low) / 2.0 / s.median
                                      : std::numeric_limits<double>::infinity();
  } else {
    s.ci_low = s.min;
    s.ci_high = s.max;
    s.ci_rel_halfwidth = std::numeric_limits<double>::infinity();
  }
  return s;
}

const char* stop_reason_name(StopReason r) {
  switch (r) {
    case StopReason::keep_going: return "running";
    case StopReason::converged: return "converged";
    case StopReason::time_limit: return "time_limit";
  }
  return "?";
}

StopReason stop_decision(const StopRule& rule, const std::vector<double>& samples, double elapsed_s) {
  if (static_cast<std::int64_t>(samples.size()) >= rule.min_samples && elapsed_s >= rule.min_time_s) {
    const Summary s = summarize(samples);
    if (s.ci_rel_halfwidth <= rule.target_ci_rel) return StopReason::converged;
  }
  if (elapsed_s >= rule.max_time_s) return StopReason::time_limit;
  return StopReason::keep_going;
}

StopReason StopChecker::after_sample(const std::vector<double>& samples, double elapsed_s) {
  if (samples.size() >= next_check_) {
    next_check_ = samples.size() < 64 ? samples.size() + 1
                                      : samples.size() + std::max<std::size_t>(1, samples.size() / 32);
    return stop_decision(rule_, samples, elapsed_s);
  }
  // At the limit, decide once more with the full rule so a run that converged says so.
  return elapsed_s >= rule_.max_time_s ? stop_decision(rule_, samples, elapsed_s)
                                      : StopReason::keep_going;
}

}  // namespace mtabench
