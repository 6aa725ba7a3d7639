#include "harness/check.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <mutex>

namespace mtabench {

double tolerance_for(DType t, bool tf32) {
  switch (t) {
    case DType::bf16: return 1e-2;
    case DType::fp16: return 5e-3;
    case DType::fp32: return tf32 ? 2e-3 : 1e-5;
  }
  return 0;
}

std::string y_coords(const Workload& w, std::int64_t flat) {
  if (flat < 0) return "-";
  const std::int64_t S = w.seq, O = w.heads_out;
  const std::int64_t j = flat % S, i = (flat / S) % S, o = (flat / (S * S)) % O,
                     b = flat / (S * S * O);
  return fmt::format("[b={}, o={}, i={}, j={}]", b, o, i, j);
}

namespace {

// Sums over one chunk of elements; merged across threads.
struct Acc {
  double err2 = 0, ref2 = 0, max_abs = 0;
  std::int64_t checked = 0, masked_checked = 0, masked_nonzero = 0, nonfinite = 0, unwritten = 0;
  std::int64_t first_bad = -1, worst = -1;

  void bad(std::int64_t idx) {
    if (first_bad < 0 || idx < first_bad) first_bad = idx;
  }
  void merge(const Acc& o) {
    err2 += o.err2;
    ref2 += o.ref2;
    if (o.worst >= 0 && (worst < 0 || o.max_abs > max_abs)) {
      max_abs = o.max_abs;
      worst = o.worst;
    }
    checked += o.checked;
    masked_checked += o.masked_checked;
    masked_nonzero += o.masked_nonzero;
    nonfinite += o.nonfinite;
    unwritten += o.unwritten;
    if (o.first_bad >= 0) bad(o.first_bad);
  }
};

bool is_poison(const HostTensor& y, std::size_t idx) {
  if (y.dtype == DType::fp32) return reinterpret_cast<const std::uint32_t*>(y.data())[idx] == 0xffffffffu;
  return reinterpret_cast<const std::uint16_t*>(y.data())[idx] == 0xffffu;
}

// One element: flat index into y, whether it is in the masked region, its reference value.
inline void visit(Acc& a, const HostTensor& y, std::int64_t idx, bool masked, double ref) {
  ++a.checked;
  const double v = y.at(static_cast<std::size_t>(idx));
  if (is_poison(y, static_cast<std::size_t>(idx))) {
    ++a.unwritten;
    a.bad(idx);
    return;
  }
  if (!std::isfinite(v)) {
    ++a.nonfinite;
    a.bad(idx);
    return;
  }
  if (masked) {
    ++a.masked_checked;
    if (v != 0.0) {
      ++a.masked_nonzero;
      a.bad(idx);
    }
    return;
  }
  const double e = v - ref;
  a.err2 += e * e;
  a.ref2 += ref * ref;
  if (std::fabs(e) > a.max_abs || a.worst < 0) {
    a.max_abs = std::fabs(e);
    a.worst = idx;
  }
}

CheckResult finish(const Acc& a, double tol, std::string against) {
  CheckResult r;
  r.against = std::move(against);
  r.tolerance = tol;
  r.checked = a.checked;
  r.masked_checked = a.masked_checked;
  r.masked_nonzero = a.masked_nonzero;
  r.nonfinite = a.nonfinite;
  r.unwritten = a.unwritten;
  r.max_abs = a.max_abs;
  r.worst = a.worst;
  r.rel_l2 = a.ref2 > 0 ? std::sqrt(a.err2 / a.ref2) : std::sqrt(a.err2);
  r.first_bad = a.first_bad;
  // Order of causes: the most specific first.
  if (a.unwritten > 0) {
    r.cause = fmt::format("output left unwritten: {} elements still hold the poison pattern", a.unwritten);
  } else if (a.nonfinite > 0) {
    r.cause = fmt::format("NaN/Inf in the output ({} elements)", a.nonfinite);
  } else if (a.masked_nonzero > 0) {
    r.cause = fmt::format("masked region (j > i) not exactly zero at {} elements", a.masked_nonzero);
  } else if (!(r.rel_l2 <= tol)) {
    r.cause = fmt::format("relative L2 error {:.3g} over the tolerance {:.0e}", r.rel_l2, tol);
    r.first_bad = a.worst;
  }
  r.passed = r.cause.empty();
  return r;
}

}  // namespace

CheckResult check_rows(const Workload& w, const HostTensor& y, const std::vector<RowRef>& rows,
                       const std::vector<double>& ref, double tol) {
  const std::int64_t S = w.seq, O = w.heads_out;
  Acc total;
  std::mutex mu;
  parallel_for(static_cast<std::int64_t>(rows.size()), [&](std::int64_t b, std::int64_t e) {
    Acc a;
    for (std::int64_t n = b; n < e; ++n) {
      const RowRef row = rows[static_cast<std::size_t>(n)];
      for (std::int64_t o = 0; o < O; ++o)
        for (std::int64_t j = 0; j < S; ++j)
          visit(a, y, ((row.b * O + o) * S + row.i) * S + j, j > row.i,
                ref[static_cast<std::size_t>((n * O + o) * S + j)]);
    }
    std::lock_guard<std::mutex> lock(mu);
    total.merge(a);
  });
  const bool all = static_cast<std::int64_t>(rows.size()) == w.batch * w.seq;
  return finish(total, tol,
                all ? "oracle-fp64 (all rows)"
                    : fmt::format("oracle-fp64 ({} sampled rows)", rows.size()));
}

CheckResult check_full(const Workload& w, const HostTensor& y, const float* ref, double tol) {
  const std::int64_t S = w.seq;
  Acc total;
  std::mutex mu;
  const std::int64_t planes = w.batch * w.heads_out * S;  // rows of y
  parallel_for(planes, [&](std::int64_t b, std::int64_t e) {
    Acc a;
    for (std::int64_t row = b; row < e; ++row) {
      const std::int64_t i = row % S;
      for (std::int64_t j = 0; j < S; ++j) {
        const std::int64_t idx = row * S + j;
        visit(a, y, idx, j > i, static_cast<double>(ref[idx]));
      }
    }
    std::lock_guard<std::mutex> lock(mu);
    total.merge(a);
  }, 64);
  return finish(total, tol, "reference-gpu-fp32 (all elements)");
}

CheckResult CheckResult::combine(const CheckResult& a, const CheckResult& b) {
  const CheckResult& first = !a.passed ? a : (!b.passed ? b : (a.rel_l2 >= b.rel_l2 ? a : b));
  CheckResult r = first;
  r.against = a.against + " + " + b.against;
  r.passed = a.passed && b.passed;
  r.rel_l2 = std::max(a.rel_l2, b.rel_l2);
  r.max_abs = std::max(a.max_abs, b.max_abs);
  r.checked = a.checked + b.checked;
  r.masked_checked = a.masked_checked + b.masked_checked;
  return r;
}

std::string CheckResult::summary() const {
  if (passed) return fmt::format("rel_l2 {:.2e} <= {:.0e} vs {}", rel_l2, tolerance, against);
  return cause;
}

nlohmann::json CheckResult::to_json(const Workload& w) const {
  nlohmann::json j{{"passed", passed},
                   {"against", against},
                   {"tolerance", tolerance},
                   {"rel_l2", rel_l2},
                   {"max_abs", max_abs},
                   {"checked_elements", checked},
                   {"masked_checked", masked_checked},
                   {"masked_nonzero", masked_nonzero},
                   {"nonfinite", nonfinite},
                   {"unwritten", unwritten}};
  if (!cause.empty()) j["cause"] = cause;
  if (first_bad >= 0) {
    j["first_bad_index"] = first_bad;
    j["first_bad_at"] = y_coords(w, first_bad);
  }
  return j;
}

}  // namespace mtabench
