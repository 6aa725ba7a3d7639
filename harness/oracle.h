#pragma once
// The correctness oracle: SPEC §1 computed in fp64 on the CPU, straight from the definition
// (mask, softmax over j <= i, k x k convolution across heads with bias, re-mask). Obviously
// right rather than fast; multithreaded over output rows. It reads the inputs as rounded to the
// workload dtype, exactly as an implementation sees them.
#include "harness/tensors.h"
#include "harness/workload.h"

#include <cstdint>
#include <vector>

namespace mtabench {

struct RowRef {
  std::int64_t b, i;  // one output row y[b, :, i, :]
};

// y[b, o, i, j] for each requested row: result[(row * heads_out + o) * seq + j].
std::vector<double> oracle_rows(const Workload& w, const HostInputs& in,
                                const std::vector<RowRef>& rows);
// Every output row, laid out like y: [batch, heads_out, seq, seq].
std::vector<double> oracle_full(const Workload& w, const HostInputs& in);
// All rows (b, i) in order.
std::vector<RowRef> all_rows(const Workload& w);
// Multiply-adds the full oracle performs (for deciding whether it is affordable).
double oracle_macs(const Workload& w);

}  // namespace mtabench
