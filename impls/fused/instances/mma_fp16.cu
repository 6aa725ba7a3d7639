#include "impls/fused/instances/mma.cuh"

namespace mtabench::fused {
template KernelFn mma_instance<__half>(int nt, int narrow);
}  // namespace mtabench::fused
