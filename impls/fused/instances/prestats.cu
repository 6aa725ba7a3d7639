#include "impls/fused/fused_prestats.cuh"
#include "impls/fused/instances/instances.h"

namespace mtabench::fused {

template <class T>
KernelFn prestats_instance(bool aligned) {
  if constexpr (sizeof(T) == 2)
    if (aligned) return fused_prestats_kernel<T, true>;
  return fused_prestats_kernel<T, false>;
}
template KernelFn prestats_instance<__nv_bfloat16>(bool);
template KernelFn prestats_instance<__half>(bool);
template KernelFn prestats_instance<float>(bool);

}  // namespace mtabench::fused
