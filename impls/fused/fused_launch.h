#pragma once
// Choosing and launching the kernel instance for a plan (fused_launch.cu; the instances are
// defined a few per file in instances/, compiled in parallel).
#include "impls/fused/fused_plan.h"

#include <cuda_runtime_api.h>

namespace mtabench::fused {

// Raises the kernel's shared-memory limit and returns how many blocks fit on one SM.
int prepare_kernel(const FusedPlan& plan, DType dtype);
// Blocks of the statistics kernel (v82) for the plan's parameters; 0 without p.prestats.
int prestats_blocks(const FusedParams& p, DType dtype);
// With p.prestats, the statistics kernel first; `programmatic`: the main kernel may then start
// before it ends (programmatic dependent launch, compute capability 9.0 and later).
void launch(const FusedPlan& plan, DType dtype, const FusedParams& p, int grid, cudaStream_t stream, bool programmatic);
// The same for the small-seq path.
void prepare_small_kernel(const SmallPlan& plan, DType dtype);
void launch_small(const SmallPlan& plan, DType dtype, const SmallParams& p, cudaStream_t stream);

}  // namespace mtabench::fused
