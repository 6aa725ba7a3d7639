#include "impls/fused/fused_small.cuh"
#include "impls/fused/instances/instances.h"

namespace mtabench::fused {

template <class T>
SmallFn small_instance(int kt) {
  return kt == 3 ? fused_small_kernel<T, 3> : fused_small_kernel<T, 0>;
}
template SmallFn small_instance<__nv_bfloat16>(int kt);
template SmallFn small_instance<__half>(int kt);
template SmallFn small_instance<float>(int kt);

}  // namespace mtabench::fused
