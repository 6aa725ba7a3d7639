#pragma once
// Math shared by the fused kernel's two paths (fused_kernel.cuh, fused_small.cuh).
#include "impls/fused/fused_small_params.h"  // ordered_key, small_sum_bits

namespace mtabench::fused {

constexpr float kLog2e = 1.4426950408889634f;

// 2^x, approximate (2 ulp); 2^-inf = +0.
__device__ __forceinline__ float ex2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// log2(x), approximate, denormal inputs flushed to zero: one MUFU.LG2 (log2f adds a range fix-up
// of five instructions for denormals). For arguments that are never denormal, such as 1 / sum
// of a softmax row (at least 1 / seq).
__device__ __forceinline__ float lg2(float x) {
  float y;
  asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// 1 / x, approximate (1 ulp), denormals flushed: one MUFU.RCP (1.f / x adds the IEEE division's
// range check and a slow-path branch). For arguments far from 0 and infinity, such as the sum
// of a softmax row (at least 1: the row's maximum contributes 2^0).
__device__ __forceinline__ float rcp_approx(float x) {
  float y;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// The warp's maximum of v by one redux.sync on ordered keys (v162); every lane gets it.
__device__ __forceinline__ float warp_max_redux(float v) {
  return __int_as_float(ordered_key(__reduce_max_sync(0xffffffffu, ordered_key(__float_as_int(v)))));
}

// The warp's sum of v in [0, NCOL] by one redux.sync in fixed point (v162; small_sum_bits says
// why it is exact enough for 16-bit types); every lane gets it.
template <int NCOL>
__device__ __forceinline__ float warp_sum_unit_redux(float v) {
  constexpr float scale = static_cast<float>(1u << small_sum_bits(NCOL));
  const unsigned q = __float2uint_rn(v * scale);
  return __uint2float_rn(__reduce_add_sync(0xffffffffu, q)) * (1.f / scale);
}

}  // namespace mtabench::fused
