#include "harness/cuda_check.h"
#include "impls/fused/fused_common.cuh"
#include "impls/fused/fused_launch.h"
#include "impls/fused/fused_prestats_stream.cuh"
#include "impls/fused/instances/instances.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace mtabench::fused {

namespace {

template <class T>
KernelFn tensor_core_kernel(const FusedPlan& plan) {
  if (plan.p.wgmma_rs) return wgmma_rs_instance<T>(plan.p);
  if (plan.p.wgmma) return wgmma_instance<T>(plan.p);
  return mma_instance<T>(plan.p.NT, ldsm_narrow(plan.p));
}

KernelFn pick(const FusedPlan& plan, DType dtype) {
  switch (dtype) {
    case DType::bf16: return tensor_core_kernel<__nv_bfloat16>(plan);
    case DType::fp16: return tensor_core_kernel<__half>(plan);
    case DType::fp32: return fma_instance(plan.KT);
  }
  throw std::logic_error("fused: unknown dtype");
}

KernelFn pick_prestats(DType dtype, PrestatsFold fold) {
  switch (dtype) {
    case DType::bf16: return prestats_instance<__nv_bfloat16>(fold);
    case DType::fp16: return prestats_instance<__half>(fold);
    case DType::fp32: return prestats_instance<float>(fold);
  }
  throw std::logic_error("fused: unknown dtype");
}

// The fold the statistics kernel runs: prestats_fold's, but fp32 rows always take the generic one
// (the lean and streaming folds are 16-bit only; prestats_instance<float>).
PrestatsFold launched_fold(const FusedParams& p, DType dtype) {
  return dtype == DType::fp32 ? PrestatsFold::generic : prestats_fold(p);
}

// The small plan's kernel for element type T: the row kernel or the small-seq kernel.
template <class T>
SmallFn small_plan_instance(const SmallPlan& plan) {
  return plan.row ? row_instance<T>(plan.p.NCOL) : small_instance<T>(plan.KT, plan.p.NCOL);
}

SmallFn pick_small(const SmallPlan& plan, DType dtype) {
  switch (dtype) {
    case DType::bf16: return small_plan_instance<__nv_bfloat16>(plan);
    case DType::fp16: return small_plan_instance<__half>(plan);
    case DType::fp32: return small_plan_instance<float>(plan);
  }
  throw std::logic_error("fused: unknown dtype");
}

// The plans leave kStaticSmemReserve bytes of the opt-in for the instance's static shared memory.
void check_static_smem(const void* kernel) {
  cudaFuncAttributes attr{};
  MTABENCH_CUDA_CALL(cudaFuncGetAttributes(&attr, kernel));
  if (attr.sharedSizeBytes > static_cast<std::size_t>(kStaticSmemReserve))
    throw std::runtime_error("fused: the kernel instance has " + std::to_string(attr.sharedSizeBytes) +
                             " bytes of static shared memory, more than the " + std::to_string(kStaticSmemReserve) +
                             " its plans reserve (kStaticSmemReserve, fused_plan.h)");
}

}  // namespace

void prepare_small_kernel(const SmallPlan& plan, DType dtype) {
  const SmallFn k = pick_small(plan, dtype);
  check_static_smem(reinterpret_cast<const void*>(k));
  MTABENCH_CUDA_CALL(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, plan.p.sm_total));
}

void launch_small(const SmallPlan& plan, DType dtype, const SmallParams& p, cudaStream_t stream) {
  pick_small(plan, dtype)<<<plan.grid, plan.threads, p.sm_total, stream>>>(p);
  MTABENCH_CUDA_CHECK_LAUNCH();
}

int prepare_kernel(const FusedPlan& plan, DType dtype) {
  const KernelFn k = pick(plan, dtype);
  check_static_smem(reinterpret_cast<const void*>(k));
  MTABENCH_CUDA_CALL(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, plan.p.sm_total));
  // v89: an SM re-splits L1 and shared memory only while idle, and the statistics kernel (no
  // shared memory) got the split with the least, so the main kernel's blocks (which need it)
  // entered an SM only after its statistics blocks had left: programmatic dependent launch
  // never overlapped the two (v86's timeline). Asking for the most shared memory lets them in
  // beside it, their set-up hidden: seq 512 -18.8% with the lean fold against -8.9% without
  // (JOURNAL.md v89). Not for fp32: +2.8% at seq 1024 (its main kernel then runs with the least L1).
  if (plan.p.prestats && dtype != DType::fp32)
    for (PrestatsFold fold : {PrestatsFold::generic, PrestatsFold::aligned, PrestatsFold::lined})
      MTABENCH_CUDA_CALL(cudaFuncSetAttribute(pick_prestats(dtype, fold),
                                              cudaFuncAttributePreferredSharedMemoryCarveout,
                                              cudaSharedmemCarveoutMaxShared));
  // v138: the streaming fold's ring (its fold is chosen per launch, by the scores' alignment).
  if (plan.p.prestats && dtype != DType::fp32)
    MTABENCH_CUDA_CALL(cudaFuncSetAttribute(pick_prestats(dtype, PrestatsFold::stream),
                                            cudaFuncAttributeMaxDynamicSharedMemorySize, kStreamSmem));
  int blocks = 0;
  MTABENCH_CUDA_CALL(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, k, plan.p.threads, plan.p.sm_total));
  return blocks;
}

// A probe, never set in a normal build: the streaming statistics kernel on at most this many
// SMs (0: all). Its timeline (tools/gpu-timeline.sh) then says how fast a few SMs stream the
// triangle: whether the kernel could run beside the warp-specialised one on a few SMs instead of
// ahead of it on all (JOURNAL.md, forty-eighth session).
#ifndef MTABENCH_PRESTATS_STREAM_BLOCKS
#define MTABENCH_PRESTATS_STREAM_BLOCKS 0
#endif

int prestats_blocks(const FusedParams& p, DType dtype) {
  if (!p.prestats) return 0;
  if (launched_fold(p, dtype) == PrestatsFold::stream)  // v138: one block an SM, persistent
    return MTABENCH_PRESTATS_STREAM_BLOCKS > 0 ? std::min(p.sms, MTABENCH_PRESTATS_STREAM_BLOCKS) : p.sms;
  const long long warps = static_cast<long long>(p.B) * p.C * p.S;  // one a (batch, channel, row)
  return static_cast<int>((warps * 32 + kPrestatsThreads - 1) / kPrestatsThreads);
}

void launch(const FusedPlan& plan, DType dtype, const FusedParams& p, int grid, cudaStream_t stream, bool programmatic) {
  if (p.prestats) {
    const PrestatsFold fold = launched_fold(p, dtype);
    const bool streaming = fold == PrestatsFold::stream;
    pick_prestats(dtype, fold)<<<prestats_blocks(p, dtype), streaming ? kStreamThreads : kPrestatsThreads,
                                 streaming ? kStreamSmem : 0, stream>>>(p);
    MTABENCH_CUDA_CHECK_LAUNCH();
  }
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(static_cast<unsigned>(grid));
  config.blockDim = dim3(static_cast<unsigned>(p.threads));
  config.dynamicSmemBytes = static_cast<std::size_t>(p.sm_total);
  config.stream = stream;
  // v82: behind the statistics kernel, the blocks may start (and do their set-up) while it runs;
  // they wait for it in griddepcontrol.wait (fused_kernel.cuh).
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  config.attrs = &attribute;
  config.numAttrs = p.prestats && programmatic ? 1 : 0;
  MTABENCH_CUDA_CALL(cudaLaunchKernelEx(&config, pick(plan, dtype), p));
}

}  // namespace mtabench::fused
