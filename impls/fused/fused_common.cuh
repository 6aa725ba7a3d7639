#pragma once
// What every part of the fused work-queue kernel shares: the block shape and eight-score
// vector loads.
#include "harness/device_dtype.cuh"
#include "impls/fused/fused_math.cuh"
#include "impls/fused/fused_params.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

namespace mtabench::fused {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

// Eight scores as raw bits (one 16-byte vector for 16-bit types, two for fp32), columns at or
// past c1 excluded later.
template <class T>
struct Vec8 {
  uint4 w[sizeof(T) == 4 ? 2 : 1];
};
template <class T>
__device__ __forceinline__ Vec8<T> load_vec8(const T* src, long long e, long long c1) {
  Vec8<T> v;
  constexpr int words = sizeof(Vec8<T>) / 16;
  if (e + 8 <= c1 && (reinterpret_cast<std::uintptr_t>(src) & 15) == 0) {
#pragma unroll
    for (int x = 0; x < words; ++x) v.w[x] = reinterpret_cast<const uint4*>(src)[x];
  } else {
    T* h = reinterpret_cast<T*>(&v);
#pragma unroll
    for (int q = 0; q < 8; ++q) h[q] = e + q < c1 ? src[q] : T(0.f);
  }
  return v;
}

}  // namespace mtabench::fused
