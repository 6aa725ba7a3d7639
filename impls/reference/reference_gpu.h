#pragma once
// The plain GPU reference: SPEC §1 in fp32, three obvious kernels (row statistics, probabilities,
// direct convolution). It is an implementation ("reference") and the harness's fast checker for
// sizes where the fp64 oracle is too slow (then itself checked against the oracle on sampled rows).
#include "harness/workload.h"
#include "impls/impl.h"

#include <cuda_runtime_api.h>

#include <cstdint>

namespace mtabench::reference {

// Scratch the reference needs: row statistics and the probability tensor, fp32.
std::size_t scratch_bytes(const Workload& w);

// y_out is in the workload dtype when out_fp32 is false, else fp32 (the checker's form).
void run_gpu(const Workload& w, const TensorArgs& t, void* scratch, bool out_fp32, cudaStream_t stream);

std::unique_ptr<Implementation> make_gpu();
std::unique_ptr<Implementation> make_cpu();

}  // namespace mtabench::reference
