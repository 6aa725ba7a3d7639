#include "impls/fused/fused_prestats.cuh"
#include "impls/fused/instances/instances.h"

namespace mtabench::fused {

template <class T>
KernelFn prestats_instance() {
  return fused_prestats_kernel<T>;
}
template KernelFn prestats_instance<__nv_bfloat16>();
template KernelFn prestats_instance<__half>();
template KernelFn prestats_instance<float>();

}  // namespace mtabench::fused
