#pragma once
// Device helpers the cheats share: element conversions, the shape, a naive one-thread-per-output
// kernel (correct, fp32 math) that a cheat can tell to skip its work, and launch helpers.
#include "harness/cuda_check.h"
#include "harness/workload.h"
#include "impls/impl.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>

namespace mtabench::adversarial::dev {

__device__ __forceinline__ float to_f(float v) {
  return v;
}
__device__ __forceinline__ float to_f(__half v) {
  return __half2float(v);
}
__device__ __forceinline__ float to_f(__nv_bfloat16 v) {
  return __bfloat162float(v);
}
template <class T> __device__ __forceinline__ T from_f(float v);
template <> __device__ __forceinline__ float from_f<float>(float v) {
  return v;
}
template <> __device__ __forceinline__ __half from_f<__half>(float v) {
  return __float2half_rn(v);
}
template <> __device__ __forceinline__ __nv_bfloat16 from_f<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

struct Shape {
  std::int64_t S, C, O, B;
  int K, r;
  static Shape of(const Workload& w) { return {w.seq, w.heads_in, w.heads_out, w.batch, w.k, w.r()}; }
  __host__ __device__ std::int64_t y_elems() const { return B * O * S * S; }
};

#define ADV_GRID_STRIDE(x, n)                                                                                \
  for (std::int64_t x = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; x < (n);           \
       x += static_cast<std::int64_t>(gridDim.x) * blockDim.x)

// y[b, o, i, j] for j <= i, straight from SPEC §1 in fp32: the softmax statistics of every
// probability row it reads are recomputed on the spot (slow, obviously right).
template <class T>
__device__ float naive_element(const T* scores, const T* weight, const T* bias, const Shape& d,
                               std::int64_t b, std::int64_t o, std::int64_t i, std::int64_t j) {
  float z = to_f(bias[o]);
  for (std::int64_t c = 0; c < d.C; ++c) {
    for (int u = 0; u < d.K; ++u) {
      const std::int64_t ii = i + u - d.r;
      if (ii < 0 || ii >= d.S) continue;
      const T* row = scores + ((b * d.C + c) * d.S + ii) * d.S;
      float m = -INFINITY;
      for (std::int64_t jj = 0; jj <= ii; ++jj)
        m = fmaxf(m, to_f(row[jj]));
      float l = 0.f;
      for (std::int64_t jj = 0; jj <= ii; ++jj)
        l += expf(to_f(row[jj]) - m);
      for (int v = 0; v < d.K; ++v) {
        const std::int64_t jj = j + v - d.r;
        if (jj < 0 || jj > ii) continue; // outside the plane, or a future position (p = 0)
        z = fmaf(to_f(weight[((o * d.C + c) * d.K + u) * d.K + v]), expf(to_f(row[jj]) - m) / l, z);
      }
    }
  }
  return z;
}

// The whole of y, correctly, unless *skip is set (a cheat's cache hit): then nothing at all.
template <class T>
__global__ void naive_kernel(const T* scores, const T* weight, const T* bias, T* y, Shape d,
                             const int* skip) {
  if (skip && *skip) return;
  ADV_GRID_STRIDE(x, d.y_elems()) {
    const std::int64_t j = x % d.S, i = (x / d.S) % d.S, o = (x / (d.S * d.S)) % d.O,
                       b = x / (d.S * d.S * d.O);
    y[x] = from_f<T>(j > i ? 0.f : naive_element(scores, weight, bias, d, b, o, i, j));
  }
}

inline unsigned blocks_for(std::int64_t n, int threads = 256) {
  return static_cast<unsigned>(
      std::max<std::int64_t>(1, std::min<std::int64_t>((n + threads - 1) / threads, 4096)));
}

template <class T>
void launch_naive(const Workload& w, const TensorArgs& t, const int* skip, cudaStream_t s) {
  const Shape d = Shape::of(w);
  naive_kernel<T><<<blocks_for(d.y_elems()), 256, 0, s>>>(
      static_cast<const T*>(t.scores), static_cast<const T*>(t.weight), static_cast<const T*>(t.bias),
      static_cast<T*>(t.y), d, skip);
  MTABENCH_CUDA_CHECK_LAUNCH();
}

// Runs f.template operator()<T>() with T the workload's element type.
template <class F> void dispatch(DType t, F&& f) {
  switch (t) {
  case DType::bf16:
    f(__nv_bfloat16{});
    break;
  case DType::fp16:
    f(__half{});
    break;
  case DType::fp32:
    f(float{});
    break;
  }
}

inline std::size_t y_bytes(const Workload& w) {
  return static_cast<std::size_t>(w.y_elems()) * dtype_size(w.dtype);
}

} // namespace mtabench::adversarial::dev
