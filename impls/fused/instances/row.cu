#include "impls/fused/fused_row.cuh"
#include "impls/fused/instances/instances.h"

namespace mtabench::fused {

template <class T>
SmallFn row_instance(int ncol) {
  return ncol == 1 ? fused_row_kernel<T, 1> : fused_row_kernel<T, 2>;
}
template SmallFn row_instance<__nv_bfloat16>(int ncol);
template SmallFn row_instance<__half>(int ncol);
template SmallFn row_instance<float>(int ncol);

}  // namespace mtabench::fused
