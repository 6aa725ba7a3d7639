#pragma once
// Math shared by the fused kernel's two paths (fused_kernel.cuh, fused_small.cuh).

namespace mtabench::fused {

constexpr float kLog2e = 1.4426950408889634f;

// 2^x, approximate (2 ulp); 2^-inf = +0.
__device__ __forceinline__ float ex2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

}  // namespace mtabench::fused
