#include "impls/fused/fused_row.cuh"
#include "impls/fused/instances/instances.h"

namespace mtabench::fused {

template <class T>
SmallFn row_instance(int ncol) {
  switch (ncol) {
    case 1: return fused_row_kernel<T, 1>;
    case 2: return fused_row_kernel<T, 2>;
    default: return fused_row_kernel<T, kRowMaxSeq / 32>;  // the plan's NCOL: 32 NCOL >= seq, <= kRowMaxSeq
  }
}
template SmallFn row_instance<__nv_bfloat16>(int ncol);
template SmallFn row_instance<__half>(int ncol);
template SmallFn row_instance<float>(int ncol);

}  // namespace mtabench::fused
