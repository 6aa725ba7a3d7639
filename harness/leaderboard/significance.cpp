#include "harness/leaderboard/significance.h"

#include "harness/stats.h"

#include <algorithm>
#include <cmath>

namespace mtabench::leaderboard {

namespace {

std::optional<double> number_at(const nlohmann::json& obj, const char* key) {
  if (obj.is_object() && obj.contains(key) && obj[key].is_number()) return obj[key].get<double>();
  return std::nullopt;
}

// splitmix64: a tiny generator whose output is the same everywhere (std distributions are not).
struct SplitMix {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
};

// Median with the same definition as the records' (linear interpolation), in O(n).
double median_in_place(std::vector<double>& v) {
  const std::size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  const double upper = v[mid];
  if (v.size() % 2 == 1) return upper;
  const double lower = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid));
  return (lower + upper) / 2;
}

}  // namespace

std::optional<TimingView> timing_view(const nlohmann::json& record) {
  const nlohmann::json& t = record.contains("timing") ? record["timing"] : nlohmann::json();
  if (!t.is_object() || !t.contains("device")) return std::nullopt;
  const nlohmann::json& d = t["device"];
  const auto median = number_at(d, "median_s");
  if (!median) return std::nullopt;
  TimingView v;
  v.median_s = *median;
  v.ci_low_s = number_at(d, "median_ci95_low_s");
  v.ci_high_s = number_at(d, "median_ci95_high_s");
  v.cv = number_at(d, "cv");
  v.p20_s = number_at(d, "p20_s");
  v.p80_s = number_at(d, "p80_s");
  if (d.contains("n") && d["n"].is_number_integer()) v.n = d["n"].get<std::int64_t>();
  if (t.contains("samples_s") && t["samples_s"].is_array())
    for (const auto& s : t["samples_s"]) v.samples_s.push_back(s.get<double>());
  v.protocol = t.value("protocol", "");
  v.mode = t.value("mode", "");
  return v;
}

MannWhitney mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b) {
  MannWhitney r;
  const double n1 = static_cast<double>(a.size()), n2 = static_cast<double>(b.size());
  if (a.empty() || b.empty()) return r;
  // Midranks of the pooled sample; tie groups feed the variance correction.
  std::vector<std::pair<double, int>> pooled;
  pooled.reserve(a.size() + b.size());
  for (double x : a) pooled.emplace_back(x, 0);
  for (double x : b) pooled.emplace_back(x, 1);
  std::sort(pooled.begin(), pooled.end());
  double rank_sum_a = 0, tie_term = 0;
  for (std::size_t i = 0; i < pooled.size();) {
    std::size_t j = i;
    while (j < pooled.size() && pooled[j].first == pooled[i].first) ++j;
    const double t = static_cast<double>(j - i);
    const double midrank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
    for (std::size_t k = i; k < j; ++k)
      if (pooled[k].second == 0) rank_sum_a += midrank;
    tie_term += t * t * t - t;
    i = j;
  }
  const double n = n1 + n2;
  r.u = rank_sum_a - n1 * (n1 + 1) / 2;
  const double mean = n1 * n2 / 2;
  const double var = n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1)));
  if (var <= 0) return r;  // every value tied: no evidence of a difference
  const double dev = std::max(0.0, std::fabs(r.u - mean) - 0.5);  // continuity correction
  r.z = (r.u > mean ? dev : -dev) / std::sqrt(var);
  r.p_two_sided = std::min(1.0, std::erfc(std::fabs(r.z) / std::sqrt(2.0)));
  return r;
}

Interval bootstrap_median_ratio(const std::vector<double>& base, const std::vector<double>& next,
                                double confidence, int resamples, std::uint64_t seed) {
  SplitMix rng{seed};
  std::vector<double> ratios, rb(base.size()), rn(next.size());
  ratios.reserve(static_cast<std::size_t>(resamples));
  for (int i = 0; i < resamples; ++i) {
    // The modulo bias is below n / 2^64: irrelevant next to resampling noise.
    for (auto& x : rb) x = base[rng.next() % base.size()];
    for (auto& x : rn) x = next[rng.next() % next.size()];
    const double mb = median_in_place(rb);
    if (mb > 0) ratios.push_back(median_in_place(rn) / mb);
  }
  if (ratios.empty()) return {};
  std::sort(ratios.begin(), ratios.end());
  const double tail = (1 - confidence) / 2;
  return {quantile_sorted(ratios, tail), quantile_sorted(ratios, 1 - tail)};
}

Difference compare_timings(const TimingView& base, const TimingView& next, double alpha) {
  Difference d;
  d.ratio = base.median_s > 0 ? next.median_s / base.median_s : 1.0;
  if (base.samples_s.size() >= kMinSamplesForRankTest && next.samples_s.size() >= kMinSamplesForRankTest) {
    d.method = "mann-whitney-u";
    const MannWhitney mw = mann_whitney_u(base.samples_s, next.samples_s);
    d.p_value = mw.p_two_sided;
    d.significant = mw.p_two_sided < alpha;
    const Interval ci = bootstrap_median_ratio(base.samples_s, next.samples_s);
    d.ratio_low = ci.low;
    d.ratio_high = ci.high;
    return d;
  }
  if (base.ci_low_s && base.ci_high_s && next.ci_low_s && next.ci_high_s && *base.ci_low_s > 0 &&
      *base.ci_high_s > 0) {
    // Two 95% intervals that do not overlap: a conservative test (its level is well under 5%).
    d.method = "median-ci";
    d.significant = *next.ci_low_s > *base.ci_high_s || *next.ci_high_s < *base.ci_low_s;
    d.ratio_low = *next.ci_low_s / *base.ci_high_s;
    d.ratio_high = *next.ci_high_s / *base.ci_low_s;
    return d;
  }
  d.method = "no-spread";  // a reported figure without an interval: never significant
  return d;
}

}  // namespace mtabench::leaderboard
