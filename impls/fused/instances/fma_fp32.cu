#include "impls/fused/fused_kernel.cuh"
#include "impls/fused/instances/instances.h"

namespace mtabench::fused {

KernelFn fma_instance(int kt) {
  switch (kt) {
    case 3: return fused_kernel<float, false, 1, 3>;
    case 5: return fused_kernel<float, false, 1, 5>;
    case 7: return fused_kernel<float, false, 1, 7>;
    default: return fused_kernel<float, false, 1, 0>;
  }
}

}  // namespace mtabench::fused
