#include "impls/fused/fused_row.cuh"
#include "impls/fused/instances/instances.h"

namespace mtabench::fused {

template <class T>
SmallFn row_instance() {
  return fused_row_kernel<T>;
}
template SmallFn row_instance<__nv_bfloat16>();
template SmallFn row_instance<__half>();
template SmallFn row_instance<float>();

}  // namespace mtabench::fused
