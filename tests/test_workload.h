#pragma once
// A workload of the given shape for tests (name and source "test"; identity depends only on the
// shape). Shared by the unit and GPU tests.
#include "harness/workload.h"

#include <cstdint>

namespace mtabench::testing {

inline Workload make_workload(int k, std::int64_t seq, std::int64_t batch, std::int64_t hin, std::int64_t hout,
                              DType t) {
  Workload w;
  w.name = "test";
  w.k = k;
  w.seq = seq;
  w.batch = batch;
  w.heads_in = hin;
  w.heads_out = hout;
  w.dtype = t;
  w.source = "test";
  return w;
}

}  // namespace mtabench::testing
