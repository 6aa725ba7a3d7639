// The statistics behind "faster beyond noise" and compare's verdicts.
#include "harness/leaderboard/significance.h"

#include <gtest/gtest.h>

#include <cmath>

namespace mtabench::leaderboard {
namespace {

TEST(MannWhitney, MatchesScipyAsymptotic) {
  // scipy.stats.mannwhitneyu's documentation example (method="asymptotic"): U = 17, p = 0.11134688653314041.
  const MannWhitney r = mann_whitney_u({19, 22, 16, 29, 24}, {20, 11, 17, 12});
  EXPECT_DOUBLE_EQ(r.u, 17);
  EXPECT_NEAR(r.p_two_sided, 0.11134688653314041, 1e-12);
}

TEST(MannWhitney, TiesAreCorrected) {
  // Tie-corrected variance by hand: n1 = n2 = 4, ties {2: 3 values, 3: 2 values};
  // midranks of the first sample 1, 3, 3, 5.5: U1 = 12.5 - 10 = 2.5;
  // var = 16/12 * (9 - (24 + 6) / 56) = 11.2857..., z = -(8 - 2.5 - 0.5) / sqrt(var).
  const MannWhitney r = mann_whitney_u({1, 2, 2, 3}, {2, 3, 4, 5});
  EXPECT_DOUBLE_EQ(r.u, 2.5);
  const double sd = std::sqrt(16.0 / 12 * (9 - 30.0 / 56));
  EXPECT_NEAR(r.z, -5.0 / sd, 1e-12);
  EXPECT_NEAR(r.p_two_sided, std::erfc(5.0 / sd / std::sqrt(2.0)), 1e-12);
}

TEST(MannWhitney, AllTiedAndIdenticalSetsShowNoDifference) {
  EXPECT_DOUBLE_EQ(mann_whitney_u({1, 1, 1}, {1, 1}).p_two_sided, 1.0);
  const std::vector<double> a{3, 1, 4, 1, 5, 9, 2, 6, 5, 3};
  EXPECT_DOUBLE_EQ(mann_whitney_u(a, a).p_two_sided, 1.0);
}

TEST(MannWhitney, ClearShiftIsSignificant) {
  std::vector<double> a, b;
  for (int i = 0; i < 30; ++i) {
    a.push_back(10 + 0.01 * i);
    b.push_back(11 + 0.01 * i);
  }
  EXPECT_LT(mann_whitney_u(a, b).p_two_sided, 1e-9);
}

TEST(Bootstrap, ReproducibleAndCoversTheRatio) {
  std::vector<double> a, b;
  for (int i = 0; i < 50; ++i) {
    a.push_back(100 + (i * 37 % 11));
    b.push_back(120 + (i * 53 % 13));
  }
  const Interval x = bootstrap_median_ratio(a, b), y = bootstrap_median_ratio(a, b);
  EXPECT_EQ(x.low, y.low);
  EXPECT_EQ(x.high, y.high);
  EXPECT_LT(x.low, 1.2);
  EXPECT_GT(x.high, 1.14);
  EXPECT_LE(x.low, x.high);
}

TimingView ci_view(double median, double lo, double hi) {
  TimingView v;
  v.median_s = median;
  v.ci_low_s = lo;
  v.ci_high_s = hi;
  return v;
}

TEST(CompareTimings, MedianIntervalsWithoutRawSamples) {
  const Difference apart = compare_timings(ci_view(10, 9.9, 10.1), ci_view(12, 11.9, 12.1));
  EXPECT_EQ(apart.method, "median-ci");
  EXPECT_TRUE(apart.significant);
  EXPECT_DOUBLE_EQ(apart.ratio, 1.2);
  EXPECT_DOUBLE_EQ(*apart.ratio_low, 11.9 / 10.1);
  const Difference overlap = compare_timings(ci_view(10, 9, 11), ci_view(10.5, 9.5, 11.5));
  EXPECT_FALSE(overlap.significant);
  TimingView bare;
  bare.median_s = 5;
  const Difference none = compare_timings(bare, ci_view(10, 9.9, 10.1));
  EXPECT_EQ(none.method, "no-spread");
  EXPECT_FALSE(none.significant);
}

TEST(CompareTimings, RawSamplesUseTheRankTest) {
  TimingView a, b;
  for (int i = 0; i < 20; ++i) {
    a.samples_s.push_back(1.0 + 0.001 * i);
    b.samples_s.push_back(1.5 + 0.001 * i);
  }
  a.median_s = 1.0095;
  b.median_s = 1.5095;
  const Difference d = compare_timings(a, b);
  EXPECT_EQ(d.method, "mann-whitney-u");
  EXPECT_TRUE(d.significant);
  ASSERT_TRUE(d.p_value.has_value());
  EXPECT_LT(*d.p_value, 1e-6);
}

}  // namespace
}  // namespace mtabench::leaderboard
