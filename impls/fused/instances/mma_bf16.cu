#include "impls/fused/instances/mma.cuh"

namespace mtabench::fused {
template KernelFn mma_instance<__nv_bfloat16>(int nt, int narrow);
}  // namespace mtabench::fused
