#pragma once
// The wgmma instances' switch, compiled once per dtype (wgmma_bf16.cu, wgmma_fp16.cu).
#include "impls/fused/fused_kernel.cuh"
#include "impls/fused/instances/instances.h"

namespace mtabench::fused {

template <class T>
KernelFn wgmma_instance(const FusedParams& p) {
  return p.NT == 2 ? fused_kernel<T, true, 2, 0, false, true>
       : p.NT == 4 ? fused_kernel<T, true, 4, 0, false, true>
                   : fused_kernel<T, true, 8, 0, false, true>;
}

}  // namespace mtabench::fused
