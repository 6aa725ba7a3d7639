#pragma once
// The mma.sync instances' switch, compiled once per dtype (mma_bf16.cu, mma_fp16.cu).
#include "impls/fused/fused_kernel.cuh"
#include "impls/fused/instances/instances.h"

namespace mtabench::fused {

template <class T>
KernelFn mma_instance(int nt, int narrow) {
  if (narrow == kLdsmHalf && nt == 2) return fused_kernel<T, true, 2, 0, kLdsmHalf>;
  if (narrow == kLdsmTwoPass && nt == 2) return fused_kernel<T, true, 2, 0, kLdsmTwoPass>;
  if (narrow == 1 && nt == 2) return fused_kernel<T, true, 2, 0, 1>;
  if (narrow == 1 && nt == 4) return fused_kernel<T, true, 4, 0, 1>;
  switch (nt) {  // (nt 8: its wide tile is the 16-column one)
    case 1: return fused_kernel<T, true, 1, 0>;
    case 2: return fused_kernel<T, true, 2, 0>;
    case 4: return fused_kernel<T, true, 4, 0>;
    default: return fused_kernel<T, true, 8, 0>;
  }
}

}  // namespace mtabench::fused
