#include "impls/fused/instances/wgmma_rs.cuh"

namespace mtabench::fused {
template KernelFn wgmma_rs_instance<__nv_bfloat16>(const FusedParams& p);
}  // namespace mtabench::fused
