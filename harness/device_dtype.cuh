#pragma once
// The workload's element types on the device: conversions to and from fp32 (round to nearest
// even) and raw 16-bit patterns. One definition for every kernel of the harness and the
// implementations.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace mtabench {

__device__ __forceinline__ float to_f(float v) { return v; }
__device__ __forceinline__ float to_f(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_f(__nv_bfloat16 v) { return __bfloat162float(v); }

template <class T>
__device__ __forceinline__ T from_f(float v);
template <>
__device__ __forceinline__ float from_f<float>(float v) { return v; }
template <>
__device__ __forceinline__ __half from_f<__half>(float v) { return __float2half_rn(v); }
template <>
__device__ __forceinline__ __nv_bfloat16 from_f<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

__device__ __forceinline__ unsigned bits16(__half v) { return __half_as_ushort(v); }
__device__ __forceinline__ unsigned bits16(__nv_bfloat16 v) { return __bfloat16_as_ushort(v); }

}  // namespace mtabench
