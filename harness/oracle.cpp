#include "harness/oracle.h"

#include <algorithm>
#include <cmath>

namespace mtabench {

std::vector<RowRef> all_rows(const Workload& w) {
  std::vector<RowRef> rows;
  rows.reserve(static_cast<std::size_t>(w.batch * w.seq));
  for (std::int64_t b = 0; b < w.batch; ++b)
    for (std::int64_t i = 0; i < w.seq; ++i) rows.push_back({b, i});
  return rows;
}

double oracle_macs(const Workload& w) {
  return static_cast<double>(w.batch) * w.heads_out * w.heads_in * w.k * w.k *
         (static_cast<double>(w.seq) * (w.seq + 1) / 2);
}

namespace {

// One output row. p holds the k probability rows it reads, [u][c][j], zero outside the
// causal region and outside [0, seq).
void one_row(const Workload& w, const HostInputs& in, const std::vector<double>& weight,
             RowRef row, double* out, std::vector<double>& p) {
  const std::int64_t S = w.seq, C = w.heads_in, O = w.heads_out, K = w.k, r = w.r();
  p.assign(static_cast<std::size_t>(K * C * S), 0.0);
  for (std::int64_t u = 0; u < K; ++u) {
    const std::int64_t ip = row.i + u - r;  // probability row read by kernel row u
    if (ip < 0 || ip >= S) continue;
    for (std::int64_t c = 0; c < C; ++c) {
      const std::size_t base = static_cast<std::size_t>(((row.b * C + c) * S + ip) * S);
      double m = -INFINITY;
      for (std::int64_t j = 0; j <= ip; ++j) m = std::max(m, static_cast<double>(in.scores.at(base + j)));
      double l = 0;
      double* pr = &p[static_cast<std::size_t>((u * C + c) * S)];
      for (std::int64_t j = 0; j <= ip; ++j) {
        pr[j] = std::exp(static_cast<double>(in.scores.at(base + j)) - m);
        l += pr[j];
      }
      for (std::int64_t j = 0; j <= ip; ++j) pr[j] /= l;  // j > ip stays exactly 0
    }
  }
  for (std::int64_t o = 0; o < O; ++o) {
    double* yo = out + o * S;
    const double bias = in.bias.at(static_cast<std::size_t>(o));
    for (std::int64_t j = 0; j < S; ++j) {
      if (j > row.i) {
        yo[j] = 0.0;  // re-masked causally
        continue;
      }
      double z = bias;
      for (std::int64_t c = 0; c < C; ++c)
        for (std::int64_t u = 0; u < K; ++u) {
          const double* pr = &p[static_cast<std::size_t>((u * C + c) * S)];
          for (std::int64_t v = 0; v < K; ++v) {
            const std::int64_t jp = j + v - r;
            if (jp < 0 || jp >= S) continue;  // zero padding
            z += weight[static_cast<std::size_t>(((o * C + c) * K + u) * K + v)] * pr[jp];
          }
        }
      yo[j] = z;
    }
  }
}

}  // namespace

std::vector<double> oracle_rows(const Workload& w, const HostInputs& in,
                                const std::vector<RowRef>& rows) {
  const std::int64_t stride = w.heads_out * w.seq;
  std::vector<double> out(rows.size() * static_cast<std::size_t>(stride));
  std::vector<double> weight(in.weight.elems);
  for (std::size_t n = 0; n < weight.size(); ++n) weight[n] = in.weight.at(n);
  parallel_for(static_cast<std::int64_t>(rows.size()), [&](std::int64_t b, std::int64_t e) {
    std::vector<double> p;
    for (std::int64_t n = b; n < e; ++n) one_row(w, in, weight, rows[static_cast<std::size_t>(n)], &out[static_cast<std::size_t>(n * stride)], p);
  });
  return out;
}

std::vector<double> oracle_full(const Workload& w, const HostInputs& in) {
  const auto rows = all_rows(w);
  const auto by_row = oracle_rows(w, in, rows);
  // Row-major [b][i][o][j] -> y layout [b][o][i][j].
  std::vector<double> y(static_cast<std::size_t>(w.y_elems()));
  const std::int64_t S = w.seq, O = w.heads_out;
  for (std::size_t n = 0; n < rows.size(); ++n)
    for (std::int64_t o = 0; o < O; ++o)
      std::copy_n(&by_row[(n * O + o) * S], S,
                  &y[static_cast<std::size_t>(((rows[n].b * O + o) * S + rows[n].i) * S)]);
  return y;
}

}  // namespace mtabench
