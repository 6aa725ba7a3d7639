// The fp64 oracle (harness/oracle.h): tiny cases worked out by hand, agreement with an
// independent formulation (softmax without the max shift, then im2col and a matrix product, all
// in fp64, written here) on random shapes, oracle_rows vs oracle_full, and the CPU implementation
// (reference-cpu) against the oracle at the dtype tolerances.
#include "harness/check.h"
#include "tests/test_workload.h"
#include "harness/oracle.h"
#include "harness/tensors.h"
#include "impls/reference/reference_gpu.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace mtabench {
namespace {

// The shared test workload builder, under this file's short name.
constexpr auto make = &testing::make_workload;

// fp32 inputs set element by element (values chosen exactly representable).
HostInputs empty_inputs(const Workload& w) {
  return {HostTensor(w.dtype, static_cast<std::size_t>(w.scores_elems())),
          HostTensor(w.dtype, static_cast<std::size_t>(w.weight_elems())),
          HostTensor(w.dtype, static_cast<std::size_t>(w.bias_elems()))};
}

struct Idx {
  const Workload& w;
  std::size_t s(std::int64_t b, std::int64_t c, std::int64_t i, std::int64_t j) const {
    return static_cast<std::size_t>(((b * w.heads_in + c) * w.seq + i) * w.seq + j);
  }
  std::size_t wt(std::int64_t o, std::int64_t c, std::int64_t u, std::int64_t v) const {
    return static_cast<std::size_t>(((o * w.heads_in + c) * w.k + u) * w.k + v);
  }
  std::size_t y(std::int64_t b, std::int64_t o, std::int64_t i, std::int64_t j) const {
    return static_cast<std::size_t>(((b * w.heads_out + o) * w.seq + i) * w.seq + j);
  }
};

// ---------------------------------------------------------------------------------------------
// Worked by hand

// seq 1: the softmax of one element is 1, so y[b,o,0,0] = bias[o] + sum_c weight[o,c,r,r]
// (only the kernel's centre tap lands inside the 1x1 plane).
TEST(OracleByHand, Seq1K3) {
  const Workload w = make(3, 1, 2, 2, 3, DType::fp32);
  HostInputs in = empty_inputs(w);
  const Idx x{w};
  for (std::size_t n = 0; n < in.scores.elems; ++n) in.scores.set(n, 7.25f * static_cast<float>(n + 1));  // any value
  for (std::size_t n = 0; n < in.weight.elems; ++n) in.weight.set(n, 0.125f * static_cast<float>(n) - 2.0f);
  for (std::int64_t o = 0; o < 3; ++o) in.bias.set(static_cast<std::size_t>(o), 0.5f + static_cast<float>(o));
  const auto y = oracle_full(w, in);
  ASSERT_EQ(y.size(), 2u * 3u);
  for (std::int64_t b = 0; b < 2; ++b)
    for (std::int64_t o = 0; o < 3; ++o) {
      const double want = in.bias.at(static_cast<std::size_t>(o)) + in.weight.at(x.wt(o, 0, 1, 1)) +
                          in.weight.at(x.wt(o, 1, 1, 1));
      EXPECT_DOUBLE_EQ(y[x.y(b, o, 0, 0)], want) << "b=" << b << " o=" << o;
    }
  // By the numbers: o = 1: bias 1.5, weight[1,0,1,1] = 0.125*22-2 = 0.75, weight[1,1,1,1] = 0.125*31-2 = 1.875.
  EXPECT_DOUBLE_EQ(y[x.y(0, 1, 0, 0)], 1.5 + 0.75 + 1.875);
}

TEST(OracleByHand, Seq1K1) {
  const Workload w = make(1, 1, 1, 3, 2, DType::fp32);
  HostInputs in = empty_inputs(w);
  in.scores.set(0, -100.0f);
  in.scores.set(1, 0.0f);
  in.scores.set(2, 55.0f);
  const float wv[6] = {1.0f, 2.0f, 4.0f, -1.0f, 0.5f, 0.25f};  // [o][c]
  for (int n = 0; n < 6; ++n) in.weight.set(static_cast<std::size_t>(n), wv[n]);
  in.bias.set(0, 0.125f);
  in.bias.set(1, -3.0f);
  const auto y = oracle_full(w, in);
  EXPECT_DOUBLE_EQ(y[0], 0.125 + 1 + 2 + 4);
  EXPECT_DOUBLE_EQ(y[1], -3.0 - 1 + 0.5 + 0.25);
}

// seq 2, k 1: p row 0 = [1, 0]; p row 1 = softmax(s10, s11). y = bias + w * p below the
// diagonal, y[0,1] = 0 exactly. The masked score s01 is never read: NaN there changes nothing.
TEST(OracleByHand, Seq2K1) {
  const Workload w = make(1, 2, 1, 1, 1, DType::fp32);
  HostInputs in = empty_inputs(w);
  in.scores.set(0, 0.75f);                                      // s00
  in.scores.set(1, std::numeric_limits<float>::quiet_NaN());   // s01: masked
  in.scores.set(2, 1.0f);                                       // s10
  in.scores.set(3, 2.0f);                                       // s11
  in.weight.set(0, 0.5f);
  in.bias.set(0, 0.25f);
  const auto y = oracle_full(w, in);
  const double p10 = std::exp(1.0) / (std::exp(1.0) + std::exp(2.0));
  const double p11 = std::exp(2.0) / (std::exp(1.0) + std::exp(2.0));
  EXPECT_DOUBLE_EQ(y[0], 0.25 + 0.5 * 1.0);
  EXPECT_EQ(y[1], 0.0);  // re-masked: exactly zero
  EXPECT_NEAR(y[2], 0.25 + 0.5 * p10, 1e-15);
  EXPECT_NEAR(y[3], 0.25 + 0.5 * p11, 1e-15);
  EXPECT_NEAR(y[2], 0.25 + 0.5 * 0.2689414213699951, 1e-15);  // 1 / (1 + e)
}

// seq 2, k 3 (r = 1), heads 2 -> 2, batch 2. With p = [[1, 0], [p10, p11]] per (b, c) and zero
// padding, the taps that land inside the plane are:
//   y00 = bias + sum_c  w[c,1,1]*1   + w[c,2,1]*p10 + w[c,2,2]*p11   (row 0 reads prob row 1)
//   y10 = bias + sum_c  w[c,0,1]*1   + w[c,1,1]*p10 + w[c,1,2]*p11
//   y11 = bias + sum_c  w[c,0,0]*1   + w[c,1,0]*p10 + w[c,1,1]*p11
//   y01 = 0
TEST(OracleByHand, Seq2K3) {
  const Workload w = make(3, 2, 2, 2, 2, DType::fp32);
  HostInputs in = empty_inputs(w);
  const Idx x{w};
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> q(-16, 16);
  for (std::size_t n = 0; n < in.scores.elems; ++n) in.scores.set(n, static_cast<float>(q(rng)) / 4);
  for (std::size_t n = 0; n < in.weight.elems; ++n) in.weight.set(n, static_cast<float>(q(rng)) / 8);
  in.bias.set(0, 0.375f);
  in.bias.set(1, -1.25f);
  const auto y = oracle_full(w, in);
  for (std::int64_t b = 0; b < 2; ++b)
    for (std::int64_t o = 0; o < 2; ++o) {
      double y00 = in.bias.at(static_cast<std::size_t>(o)), y10 = y00, y11 = y00;
      for (std::int64_t c = 0; c < 2; ++c) {
        const double s10 = in.scores.at(x.s(b, c, 1, 0)), s11 = in.scores.at(x.s(b, c, 1, 1));
        const double p10 = std::exp(s10) / (std::exp(s10) + std::exp(s11));
        const double p11 = std::exp(s11) / (std::exp(s10) + std::exp(s11));
        auto W = [&](int u, int v) { return static_cast<double>(in.weight.at(x.wt(o, c, u, v))); };
        y00 += W(1, 1) + W(2, 1) * p10 + W(2, 2) * p11;
        y10 += W(0, 1) + W(1, 1) * p10 + W(1, 2) * p11;
        y11 += W(0, 0) + W(1, 0) * p10 + W(1, 1) * p11;
      }
      SCOPED_TRACE("b=" + std::to_string(b) + " o=" + std::to_string(o));
      EXPECT_NEAR(y[x.y(b, o, 0, 0)], y00, 1e-13);
      EXPECT_EQ(y[x.y(b, o, 0, 1)], 0.0);
      EXPECT_NEAR(y[x.y(b, o, 1, 0)], y10, 1e-13);
      EXPECT_NEAR(y[x.y(b, o, 1, 1)], y11, 1e-13);
    }
}

// The causal mask with -1e9 in SPEC §1 is the same as leaving the future out: a score far
// above the others in the masked region does not change any output.
TEST(OracleByHand, FutureScoresAreIgnored) {
  const Workload w = make(3, 6, 1, 2, 2, DType::fp32);
  HostInputs a = generate_inputs_host(w, 5, 0);
  HostInputs b = a;
  const Idx x{w};
  for (std::int64_t c = 0; c < 2; ++c)
    for (std::int64_t i = 0; i < 6; ++i)
      for (std::int64_t j = i + 1; j < 6; ++j) b.scores.set(x.s(0, c, i, j), 1e4f * static_cast<float>(j + 1));
  EXPECT_EQ(oracle_full(w, a), oracle_full(w, b));
}

// ---------------------------------------------------------------------------------------------
// An independent formulation: probabilities as exp(s) / sum(exp(s)) (no max shift), then
// im2col (one row per output position, one column per (c, u, v)) times the weight matrix.

std::vector<double> im2col_reference(const Workload& w, const HostInputs& in) {
  const std::int64_t S = w.seq, C = w.heads_in, O = w.heads_out, K = w.k, r = K / 2, B = w.batch;
  std::vector<double> P(static_cast<std::size_t>(B * C * S * S), 0.0);
  for (std::int64_t bc = 0; bc < B * C; ++bc)
    for (std::int64_t i = 0; i < S; ++i) {
      double den = 0;
      for (std::int64_t j = 0; j <= i; ++j) den += std::exp(static_cast<double>(in.scores.at(static_cast<std::size_t>((bc * S + i) * S + j))));
      for (std::int64_t j = 0; j <= i; ++j)
        P[static_cast<std::size_t>((bc * S + i) * S + j)] =
            std::exp(static_cast<double>(in.scores.at(static_cast<std::size_t>((bc * S + i) * S + j)))) / den;
    }
  const std::int64_t cols = C * K * K;
  // Weight as a (C*K*K) x O matrix.
  std::vector<double> Wm(static_cast<std::size_t>(cols * O));
  for (std::int64_t o = 0; o < O; ++o)
    for (std::int64_t col = 0; col < cols; ++col)
      Wm[static_cast<std::size_t>(col * O + o)] = in.weight.at(static_cast<std::size_t>(o * cols + col));
  std::vector<double> y(static_cast<std::size_t>(B * O * S * S), 0.0);
  std::vector<double> A(static_cast<std::size_t>(S * S * cols));
  for (std::int64_t b = 0; b < B; ++b) {
    // im2col of batch b: A[(i, j), (c, u, v)] = P[b, c, i+u-r, j+v-r] or 0 (padding).
    for (std::int64_t i = 0; i < S; ++i)
      for (std::int64_t j = 0; j < S; ++j)
        for (std::int64_t c = 0; c < C; ++c)
          for (std::int64_t u = 0; u < K; ++u)
            for (std::int64_t v = 0; v < K; ++v) {
              const std::int64_t ii = i + u - r, jj = j + v - r;
              A[static_cast<std::size_t>((i * S + j) * cols + (c * K + u) * K + v)] =
                  (ii < 0 || ii >= S || jj < 0 || jj >= S) ? 0.0 : P[static_cast<std::size_t>(((b * C + c) * S + ii) * S + jj)];
            }
    // Z = A * Wm + bias, then the causal re-mask.
    for (std::int64_t pos = 0; pos < S * S; ++pos)
      for (std::int64_t o = 0; o < O; ++o) {
        double z = in.bias.at(static_cast<std::size_t>(o));
        for (std::int64_t col = 0; col < cols; ++col)
          z += A[static_cast<std::size_t>(pos * cols + col)] * Wm[static_cast<std::size_t>(col * O + o)];
        const std::int64_t i = pos / S, j = pos % S;
        y[static_cast<std::size_t>(((b * O + o) * S + i) * S + j)] = j > i ? 0.0 : z;
      }
  }
  return y;
}

struct Shape {
  int k;
  std::int64_t seq, batch, hin, hout;
  DType t;
};

std::vector<Shape> random_shapes(std::uint64_t seed, int n) {
  std::mt19937_64 rng(seed);
  const std::int64_t seqs[] = {1, 2, 3, 5, 7, 8, 11, 13, 16, 17, 23, 31, 37};
  const DType types[] = {DType::bf16, DType::fp16, DType::fp32};
  std::vector<Shape> v;
  for (int i = 0; i < n; ++i) {
    Shape s;
    s.k = 1 + 2 * static_cast<int>(rng() % 4);  // 1, 3, 5, 7
    s.seq = seqs[rng() % std::size(seqs)];
    s.batch = 1 + static_cast<std::int64_t>(rng() % 3);
    s.hin = 1 + static_cast<std::int64_t>(rng() % 4);
    s.hout = 1 + static_cast<std::int64_t>(rng() % 4);
    s.t = types[rng() % 3];
    v.push_back(s);
  }
  // Always include the corners: seq 1, k larger than seq, a prime seq with the widest kernel.
  v.push_back({7, 1, 2, 3, 2, DType::fp32});
  v.push_back({7, 3, 1, 2, 3, DType::bf16});
  v.push_back({5, 29, 2, 2, 1, DType::fp16});
  return v;
}

TEST(OracleIndependent, AgreesWithIm2colOnRandomShapes) {
  int n = 0;
  for (const Shape& s : random_shapes(2024, 40)) {
    const Workload w = make(s.k, s.seq, s.batch, s.hin, s.hout, s.t);
    SCOPED_TRACE(w.shape_string());
    const HostInputs in = generate_inputs_host(w, 11 + static_cast<std::uint64_t>(n++), 0);
    const auto got = oracle_full(w, in);
    const auto want = im2col_reference(w, in);
    ASSERT_EQ(got.size(), want.size());
    double err2 = 0, ref2 = 0, max_abs = 0, max_ref = 0;
    for (std::size_t e = 0; e < got.size(); ++e) {
      ASSERT_TRUE(std::isfinite(got[e]));
      err2 += (got[e] - want[e]) * (got[e] - want[e]);
      ref2 += want[e] * want[e];
      max_abs = std::max(max_abs, std::fabs(got[e] - want[e]));
      max_ref = std::max(max_ref, std::fabs(want[e]));
    }
    EXPECT_LE(std::sqrt(err2 / ref2), 1e-12);
    EXPECT_LE(max_abs, 1e-12 * (1 + max_ref));
    // The re-masked upper triangle is exactly zero.
    for (std::int64_t p = 0; p < w.batch * w.heads_out; ++p)
      for (std::int64_t i = 0; i < w.seq; ++i)
        for (std::int64_t j = i + 1; j < w.seq; ++j)
          ASSERT_EQ(got[static_cast<std::size_t>((p * w.seq + i) * w.seq + j)], 0.0);
  }
}

TEST(OracleIndependent, RowsSubsetEqualsFullRows) {
  const Workload w = make(5, 23, 3, 3, 4, DType::bf16);
  const HostInputs in = generate_inputs_host(w, 99, 0);
  const auto full = oracle_full(w, in);
  const std::vector<RowRef> rows = {{2, 22}, {0, 0}, {1, 7}, {2, 0}, {0, 22}, {1, 7}};
  const auto sub = oracle_rows(w, in, rows);
  ASSERT_EQ(sub.size(), rows.size() * static_cast<std::size_t>(w.heads_out * w.seq));
  const Idx x{w};
  for (std::size_t n = 0; n < rows.size(); ++n)
    for (std::int64_t o = 0; o < w.heads_out; ++o)
      for (std::int64_t j = 0; j < w.seq; ++j)
        ASSERT_EQ(sub[(n * static_cast<std::size_t>(w.heads_out) + static_cast<std::size_t>(o)) * static_cast<std::size_t>(w.seq) + static_cast<std::size_t>(j)],
                  full[x.y(rows[n].b, o, rows[n].i, j)])
            << "row " << n << " o " << o << " j " << j;
}

TEST(OracleIndependent, AllRowsAndMacs) {
  const Workload w = make(3, 5, 2, 3, 4, DType::fp32);
  const auto rows = all_rows(w);
  ASSERT_EQ(rows.size(), 10u);
  EXPECT_EQ(rows[0].b, 0);
  EXPECT_EQ(rows[0].i, 0);
  EXPECT_EQ(rows[9].b, 1);
  EXPECT_EQ(rows[9].i, 4);
  // batch * heads_out * heads_in * k^2 * (causal elements of a plane) = 2*4*3*9*15
  EXPECT_DOUBLE_EQ(oracle_macs(w), 2.0 * 4 * 3 * 9 * 15);
}

TEST(Inputs, FollowSpecDistributionsAndAreDeterministic) {
  const Workload w = make(3, 64, 2, 4, 4, DType::fp32);
  const HostInputs a = generate_inputs_host(w, 1, 0), b = generate_inputs_host(w, 1, 0);
  EXPECT_EQ(a.scores.bytes, b.scores.bytes);
  EXPECT_EQ(a.weight.bytes, b.weight.bytes);
  const HostInputs c = generate_inputs_host(w, 1, 1), d = generate_inputs_host(w, 2, 0);
  EXPECT_NE(a.scores.bytes, c.scores.bytes);  // another input set
  EXPECT_NE(a.scores.bytes, d.scores.bytes);  // another seed
  auto sd = [](const HostTensor& t) {
    double s = 0, s2 = 0;
    for (std::size_t i = 0; i < t.elems; ++i) s += t.at(i), s2 += static_cast<double>(t.at(i)) * t.at(i);
    const double m = s / static_cast<double>(t.elems);
    return std::sqrt(s2 / static_cast<double>(t.elems) - m * m);
  };
  // scores ~ N(0,1)*3 (32768 draws: within 3%); weight ~ N(0,1)/sqrt(4*9) (144 draws: within 25%).
  EXPECT_NEAR(sd(a.scores), 3.0, 0.09);
  EXPECT_NEAR(sd(a.weight), 1.0 / 6.0, 0.25 / 6.0);
  // bias ~ N(0, 0.1^2): never zero, never constant.
  EXPECT_NE(a.bias.at(0), 0.0f);
  EXPECT_NE(a.bias.at(0), a.bias.at(1));
}

// ---------------------------------------------------------------------------------------------
// reference-cpu against the oracle at the tolerances of SPEC §1

HostTensor run_cpu(const Workload& w, const HostInputs& in) {
  auto impl = reference::make_cpu();
  HostTensor y(w.dtype, static_cast<std::size_t>(w.y_elems()));
  std::fill(y.bytes.begin(), y.bytes.end(), 0xff);  // poison, as the harness does
  impl->initialize(w, nullptr, nullptr);
  impl->run({in.scores.data(), in.weight.data(), in.bias.data(), y.data()}, nullptr);
  return y;
}

TEST(ReferenceCpu, DeclaresItself) {
  auto impl = reference::make_cpu();
  const ImplInfo i = impl->info();
  EXPECT_EQ(i.name, "reference-cpu");
  EXPECT_EQ(i.location, Location::host);
  EXPECT_FALSE(i.tf32);
  EXPECT_FALSE(i.license.empty());
  EXPECT_FALSE(i.source.empty());
  EXPECT_TRUE(impl->check_support(make(3, 32, 2, 4, 4, DType::bf16), nullptr).ok);
  const Support big = impl->check_support(make(7, 4096, 1, 32, 32, DType::bf16), nullptr);
  EXPECT_FALSE(big.ok);
  EXPECT_FALSE(big.reason.empty());
}

TEST(ReferenceCpu, MatchesOracleWithinTolerance) {
  int n = 0;
  for (const Shape& s : random_shapes(77, 30)) {
    const Workload w = make(s.k, s.seq, s.batch, s.hin, s.hout, s.t);
    SCOPED_TRACE(w.shape_string());
    const HostInputs in = generate_inputs_host(w, 100 + static_cast<std::uint64_t>(n++), 0);
    const HostTensor y = run_cpu(w, in);
    const auto rows = all_rows(w);
    const CheckResult r = check_rows(w, y, rows, oracle_rows(w, in, rows), tolerance_for(w.dtype, false));
    EXPECT_TRUE(r.passed) << r.summary();
    EXPECT_EQ(r.unwritten, 0);
    EXPECT_EQ(r.nonfinite, 0);
    EXPECT_EQ(r.masked_nonzero, 0);
    EXPECT_EQ(r.checked, w.y_elems());
    EXPECT_EQ(r.masked_checked, w.batch * w.heads_out * w.seq * (w.seq - 1) / 2);
    EXPECT_LE(r.rel_l2, tolerance_for(w.dtype, false));
  }
}

TEST(ReferenceCpu, SeedWorkloadAllDtypes) {
  for (DType t : {DType::bf16, DType::fp16, DType::fp32}) {
    const Workload w = make(3, 32, 2, 4, 4, t);
    const HostInputs in = generate_inputs_host(w, 1, 0);
    const auto rows = all_rows(w);
    const CheckResult r = check_rows(w, run_cpu(w, in), rows, oracle_rows(w, in, rows), tolerance_for(t, false));
    EXPECT_TRUE(r.passed) << dtype_name(t) << ": " << r.summary();
    // The rounding to the output dtype dominates the error: bf16 keeps 8 bits, fp16 11, fp32 24.
    if (t == DType::fp32) EXPECT_LT(r.rel_l2, 1e-6);
    else EXPECT_GT(r.rel_l2, 1e-5);
  }
}

// ---------------------------------------------------------------------------------------------
// The checker catches what SPEC §4 lists (on a correct output, then spoiled one way at a time).

TEST(Check, Tolerances) {
  EXPECT_EQ(tolerance_for(DType::bf16, false), 1e-2);
  EXPECT_EQ(tolerance_for(DType::fp16, false), 5e-3);
  EXPECT_EQ(tolerance_for(DType::fp32, false), 1e-5);
  EXPECT_EQ(tolerance_for(DType::fp32, true), 2e-3);
}

TEST(Check, CatchesEachKindOfWrongOutput) {
  const Workload w = make(3, 9, 1, 2, 2, DType::fp32);
  const HostInputs in = generate_inputs_host(w, 3, 0);
  const auto rows = all_rows(w);
  const auto ref = oracle_rows(w, in, rows);
  const HostTensor good = run_cpu(w, in);
  const double tol = tolerance_for(w.dtype, false);
  ASSERT_TRUE(check_rows(w, good, rows, ref, tol).passed);
  const Idx x{w};

  HostTensor y = good;
  y.set(x.y(0, 1, 2, 5), 1e-3f);  // masked region not zero
  CheckResult r = check_rows(w, y, rows, ref, tol);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.masked_nonzero, 1);
  EXPECT_NE(r.cause.find("masked"), std::string::npos) << r.cause;
  EXPECT_EQ(r.first_bad, static_cast<std::int64_t>(x.y(0, 1, 2, 5)));
  EXPECT_EQ(y_coords(w, r.first_bad), "[b=0, o=1, i=2, j=5]");

  y = good;
  y.set(x.y(0, 0, 4, 1), std::numeric_limits<float>::infinity());
  r = check_rows(w, y, rows, ref, tol);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.nonfinite, 1);
  EXPECT_NE(r.cause.find("NaN/Inf"), std::string::npos) << r.cause;

  y = good;
  std::memset(static_cast<unsigned char*>(y.data()) + 4 * x.y(0, 0, 8, 8), 0xff, 4);  // poison left
  r = check_rows(w, y, rows, ref, tol);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.unwritten, 1);
  EXPECT_NE(r.cause.find("unwritten"), std::string::npos) << r.cause;

  y = good;
  y.set(x.y(0, 1, 8, 3), y.at(x.y(0, 1, 8, 3)) * 1.01f);  // one element 1% off: over fp32's 1e-5
  r = check_rows(w, y, rows, ref, tol);
  EXPECT_FALSE(r.passed);
  EXPECT_NE(r.cause.find("relative L2"), std::string::npos) << r.cause;
  EXPECT_EQ(r.worst, static_cast<std::int64_t>(x.y(0, 1, 8, 3)));
  EXPECT_TRUE(check_rows(w, y, rows, ref, 1e-2).passed);  // within a looser tolerance
}

TEST(Check, FullReferenceAndSampledRows) {
  const Workload w = make(3, 12, 2, 2, 3, DType::bf16);
  const HostInputs in = generate_inputs_host(w, 8, 0);
  const HostTensor y = run_cpu(w, in);
  const auto full = oracle_full(w, in);
  std::vector<float> ref32(full.begin(), full.end());
  const CheckResult a = check_full(w, y, ref32.data(), tolerance_for(w.dtype, false));
  EXPECT_TRUE(a.passed) << a.summary();
  EXPECT_EQ(a.checked, w.y_elems());
  const std::vector<RowRef> some = {{0, 3}, {1, 11}};
  const CheckResult b = check_rows(w, y, some, oracle_rows(w, in, some), tolerance_for(w.dtype, false));
  EXPECT_TRUE(b.passed);
  EXPECT_EQ(b.checked, 2 * w.heads_out * w.seq);
  EXPECT_NE(b.against.find("2 sampled rows"), std::string::npos) << b.against;
  const CheckResult c = CheckResult::combine(a, b);
  EXPECT_TRUE(c.passed);
  EXPECT_EQ(c.checked, a.checked + b.checked);
}

}  // namespace
}  // namespace mtabench
