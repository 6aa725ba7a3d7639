#include "impls/fused/instances/wgmma.cuh"

namespace mtabench::fused {
template KernelFn wgmma_instance<__half>(const FusedParams& p);
}  // namespace mtabench::fused
