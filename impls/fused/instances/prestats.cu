#include "impls/fused/fused_prestats_stream.cuh"
#include "impls/fused/instances/instances.h"

namespace mtabench::fused {

template <class T>
KernelFn prestats_instance(PrestatsFold fold) {
  if constexpr (sizeof(T) == 2) {
    if (fold == PrestatsFold::aligned) return fused_prestats_kernel<T, PrestatsFold::aligned>;
    if (fold == PrestatsFold::lined) return fused_prestats_kernel<T, PrestatsFold::lined>;
    if (fold == PrestatsFold::stream) return fused_prestats_stream_kernel<T>;
  }
  return fused_prestats_kernel<T, PrestatsFold::generic>;
}
template KernelFn prestats_instance<__nv_bfloat16>(PrestatsFold);
template KernelFn prestats_instance<__half>(PrestatsFold);
template KernelFn prestats_instance<float>(PrestatsFold);

}  // namespace mtabench::fused
