#include "harness/cuda_check.h"
#include "impls/fused/fused_kernel.cuh"
#include "impls/fused/fused_launch.h"
#include "impls/fused/fused_small.cuh"

#include <stdexcept>

namespace mtabench::fused {

namespace {

using KernelFn = void (*)(FusedParams);

template <class T>
KernelFn mma_kernel(int nt, bool narrow, bool wgmma) {
  if (wgmma) return nt == 2 ? fused_kernel<T, true, 2, 0, false, true>
                  : nt == 4 ? fused_kernel<T, true, 4, 0, false, true>
                            : fused_kernel<T, true, 8, 0, false, true>;
  if (narrow && nt == 2) return fused_kernel<T, true, 2, 0, true>;
  if (narrow && nt == 4) return fused_kernel<T, true, 4, 0, true>;
  switch (nt) {  // (nt 8: its wide tile is the 16-column one)
    case 1: return fused_kernel<T, true, 1, 0>;
    case 2: return fused_kernel<T, true, 2, 0>;
    case 4: return fused_kernel<T, true, 4, 0>;
    default: return fused_kernel<T, true, 8, 0>;
  }
}

KernelFn fma_kernel(int kt) {
  switch (kt) {
    case 3: return fused_kernel<float, false, 1, 3>;
    case 5: return fused_kernel<float, false, 1, 5>;
    case 7: return fused_kernel<float, false, 1, 7>;
    default: return fused_kernel<float, false, 1, 0>;
  }
}

KernelFn pick(const FusedPlan& plan, DType dtype) {
  switch (dtype) {
    case DType::bf16: return mma_kernel<__nv_bfloat16>(plan.p.NT, plan.p.ldsm && plan.p.TJ == 16, plan.p.wgmma);
    case DType::fp16: return mma_kernel<__half>(plan.p.NT, plan.p.ldsm && plan.p.TJ == 16, plan.p.wgmma);
    case DType::fp32: return fma_kernel(plan.KT);
  }
  throw std::logic_error("fused: unknown dtype");
}

using SmallFn = void (*)(SmallParams);

template <class T>
SmallFn small_kernel(int kt) {
  return kt == 3 ? fused_small_kernel<T, 3> : fused_small_kernel<T, 0>;
}

SmallFn pick_small(const SmallPlan& plan, DType dtype) {
  switch (dtype) {
    case DType::bf16: return small_kernel<__nv_bfloat16>(plan.KT);
    case DType::fp16: return small_kernel<__half>(plan.KT);
    case DType::fp32: return small_kernel<float>(plan.KT);
  }
  throw std::logic_error("fused: unknown dtype");
}

}  // namespace

void prepare_small_kernel(const SmallPlan& plan, DType dtype) {
  MTABENCH_CUDA_CALL(
      cudaFuncSetAttribute(pick_small(plan, dtype), cudaFuncAttributeMaxDynamicSharedMemorySize, plan.p.sm_total));
}

void launch_small(const SmallPlan& plan, DType dtype, const SmallParams& p, cudaStream_t stream) {
  pick_small(plan, dtype)<<<plan.grid, kSmallThreads, p.sm_total, stream>>>(p);
  MTABENCH_CUDA_CHECK_LAUNCH();
}

int prepare_kernel(const FusedPlan& plan, DType dtype) {
  const KernelFn k = pick(plan, dtype);
  MTABENCH_CUDA_CALL(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, plan.p.sm_total));
  int blocks = 0;
  MTABENCH_CUDA_CALL(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, k, kThreads, plan.p.sm_total));
  return blocks;
}

void launch(const FusedPlan& plan, DType dtype, const FusedParams& p, int grid, cudaStream_t stream) {
  pick(plan, dtype)<<<grid, kThreads, p.sm_total, stream>>>(p);
  MTABENCH_CUDA_CHECK_LAUNCH();
}

}  // namespace mtabench::fused
