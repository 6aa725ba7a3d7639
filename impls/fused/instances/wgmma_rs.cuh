#pragma once
// The register-A wgmma instances' switch, compiled once per dtype (wgmma_rs_bf16.cu,
// wgmma_rs_fp16.cu); the plan takes them for k 5 and 7 with n-tiles 2 and 4 only, and the
// warp-specialised ones (p.ws) with 4.
#include "impls/fused/fused_ws.cuh"
#include "impls/fused/instances/instances.h"

namespace mtabench::fused {

template <class T>
KernelFn wgmma_rs_instance(const FusedParams& p) {
  if (p.ws) return p.K == 5 ? fused_kernel_ws<T, 4, 5> : fused_kernel_ws<T, 4, 7>;
  if (p.NT == 2) return p.K == 5 ? fused_kernel<T, true, 2, 5, false, true> : fused_kernel<T, true, 2, 7, false, true>;
  return p.K == 5 ? fused_kernel<T, true, 4, 5, false, true> : fused_kernel<T, true, 4, 7, false, true>;
}

}  // namespace mtabench::fused
