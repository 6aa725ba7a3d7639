#pragma once
// The fused kernel's instances, declared here and defined a few per file in this folder, so that
// nvcc compiles them in parallel: one file held all of them and was the build's critical path
// (~60 s of a ~100 s build on the GPU machine). fused_launch.cu picks from them.
#include "impls/fused/fused_params.h"
#include "impls/fused/fused_small_params.h"

namespace mtabench::fused {

using KernelFn = void (*)(FusedParams);
using SmallFn = void (*)(SmallParams);

// mma.sync (bf16, fp16): the column interleave for 1-4 heads out (nt 1), the ldmatrix path's
// wide tile, or by `narrow` (ldsm_narrow) its 16-column or half tile. mma_bf16.cu,
// mma_fp16.cu.
template <class T>
KernelFn mma_instance(int nt, int narrow);
// wgmma (sm_90a; the plan's p.wgmma): wgmma_bf16.cu, wgmma_fp16.cu.
template <class T>
KernelFn wgmma_instance(const FusedParams& p);
// wgmma with A from registers (the plan's p.wgmma_rs: k 5 and 7 compiled in, n-tiles 2 and 4):
// wgmma_rs_bf16.cu, wgmma_rs_fp16.cu.
template <class T>
KernelFn wgmma_rs_instance(const FusedParams& p);
// fp32 FMA, k 3/5/7 compiled in, any other k (kt 0). fma_fp32.cu.
KernelFn fma_instance(int kt);
// v82: the row statistics ahead of the main kernel (the plan's p.prestats). prestats.cu.
// `fold` (prestats_fold, fused_plan.h): the 16-bit instances' lean folds (v89 aligned, v121
// lined); fp32 takes the generic fold whatever it says.
template <class T>
KernelFn prestats_instance(PrestatsFold fold);
// The small-seq kernel, k 3 compiled in or any k (kt 0), with ncol (1, 2, 4, 8) columns per lane
// in its row loads. small.cu.
template <class T>
SmallFn small_instance(int kt, int ncol);
// v164: the row kernel (the small plan's `row`), ncol (1, 2 since v166, 4 since v168) columns a
// lane. row.cu.
template <class T>
SmallFn row_instance(int ncol);

}  // namespace mtabench::fused
