#include "impls/fused/fused_small.cuh"
#include "impls/fused/instances/instances.h"

namespace mtabench::fused {

template <class T, int NCOL>
SmallFn small_ncol(int kt) {
  return kt == 3 ? fused_small_kernel<T, 3, NCOL> : fused_small_kernel<T, 0, NCOL>;
}

template <class T>
SmallFn small_instance(int kt, int ncol) {
  switch (ncol) {
    case 1: return small_ncol<T, 1>(kt);
    case 2: return small_ncol<T, 2>(kt);
    case 4: return small_ncol<T, 4>(kt);
    default: return small_ncol<T, kSmallCols>(kt);
  }
}
template SmallFn small_instance<__nv_bfloat16>(int kt, int ncol);
template SmallFn small_instance<__half>(int kt, int ncol);
template SmallFn small_instance<float>(int kt, int ncol);

}  // namespace mtabench::fused
