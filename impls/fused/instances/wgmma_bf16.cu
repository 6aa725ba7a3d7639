#include "impls/fused/instances/wgmma.cuh"

namespace mtabench::fused {
template KernelFn wgmma_instance<__nv_bfloat16>(const FusedParams& p);
}  // namespace mtabench::fused
