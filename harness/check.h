#pragma once
// Judging an output against a reference (SPEC §1 tolerances, SPEC §4 causes).
#include "harness/oracle.h"
#include "harness/tensors.h"
#include "harness/workload.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace mtabench {

// Relative L2 bound ||y - ref|| / ||ref|| for a dtype (SPEC §1); TF32 is judged apart.
double tolerance_for(DType t, bool tf32);

struct CheckResult {
  bool passed = true;
  std::string cause;    // empty when passed; else what failed first (see check.cpp)
  std::string against;  // "oracle-fp64 (all rows)", "oracle-fp64 (24 sampled rows)", ...
  double tolerance = 0;
  double rel_l2 = 0;    // ||y - ref|| / ||ref|| over the checked elements
  double max_abs = 0;   // largest |y - ref|
  std::int64_t checked = 0;          // elements compared
  std::int64_t masked_checked = 0;   // of which in the masked (future) region
  std::int64_t masked_nonzero = 0;   // masked elements that are not exactly 0
  std::int64_t nonfinite = 0;        // NaN or Inf written by the implementation
  std::int64_t unwritten = 0;        // still holding the harness's poison pattern
  std::int64_t first_bad = -1;       // flat index into y of the first bad element (or worst)
  std::int64_t worst = -1;           // flat index of the largest |y - ref|

  nlohmann::json to_json(const Workload& w) const;
  std::string summary() const;  // one line for tables and logs
  // Combines the verdicts of two checks (e.g. sampled-oracle and full GPU-reference).
  static CheckResult combine(const CheckResult& a, const CheckResult& b);
};

// y: the implementation's output (whole tensor, workload dtype). Reference rows as produced by
// oracle_rows for `rows`.
CheckResult check_rows(const Workload& w, const HostTensor& y, const std::vector<RowRef>& rows,
                       const std::vector<double>& ref, double tol);
// Reference covering the whole tensor (fp32, y layout), e.g. from the GPU reference kernel.
CheckResult check_full(const Workload& w, const HostTensor& y, const float* ref, double tol);

// Human coordinates of a flat index into y: "[b, o, i, j]".
std::string y_coords(const Workload& w, std::int64_t flat);

}  // namespace mtabench
