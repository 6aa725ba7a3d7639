#include "harness/cuda_check.h"
#include "harness/device_dtype.cuh"
#include "harness/device.h"
#include "impls/reference/reference_gpu.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace mtabench::reference {

namespace {

struct Dims {
  std::int64_t S, C, O, B;
  int K, r;
};

// One warp per (b, c, i) row: max and sum of exp over j <= i. The warps stride over the rows:
// grid_for caps the grid at 2^20 blocks (8 Mi warps), and B C S can exceed that (seq 256 with
// B C > 32768); without the stride the rows past the cap kept stale statistics (found by the
// gate's own oracle check, which refused a verdict at seq 256, batch 9000, heads 4).
template <class T>
__global__ void row_stats(const T* scores, float2* stats, Dims d) {
  const std::int64_t rows = d.B * d.C * d.S;
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * blockDim.x / 32;
  const int lane = threadIdx.x % 32;
  for (std::int64_t warp = (blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x) / 32; warp < rows;
       warp += warps) {  // warp-uniform: every lane of a warp runs the same rows (shuffles below)
    const std::int64_t i = warp % d.S;
    const T* row = scores + warp * d.S;
    float m = -INFINITY;
    for (std::int64_t j = lane; j <= i; j += 32) m = fmaxf(m, to_f(row[j]));
    for (int o = 16; o; o /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    float l = 0;
    for (std::int64_t j = lane; j <= i; j += 32) l += expf(to_f(row[j]) - m);
    for (int o = 16; o; o /= 2) l += __shfl_xor_sync(0xffffffffu, l, o);
    if (lane == 0) stats[warp] = make_float2(m, 1.0f / l);
  }
}

// p[b, c, i, j] = softmax over j <= i; exactly 0 above the diagonal.
template <class T>
__global__ void probabilities(const T* scores, const float2* stats, float* p, Dims d) {
  const std::int64_t n = d.B * d.C * d.S * d.S;
  for (std::int64_t x = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; x < n;
       x += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t j = x % d.S, row = x / d.S, i = row % d.S;
    const float2 st = stats[row];
    p[x] = j <= i ? expf(to_f(scores[x]) - st.x) * st.y : 0.f;
  }
}

// One thread per output element: the direct sum over c, u, v with zero padding.
template <class T, class TOut>
__global__ void convolve(const float* p, const T* weight, const T* bias, TOut* y, Dims d) {
  const std::int64_t n = d.B * d.O * d.S * d.S;
  for (std::int64_t x = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; x < n;
       x += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t j = x % d.S, i = (x / d.S) % d.S, o = (x / (d.S * d.S)) % d.O,
                       b = x / (d.S * d.S * d.O);
    if (j > i) {
      y[x] = from_f<TOut>(0.f);
      continue;
    }
    float z = to_f(bias[o]);
    for (std::int64_t c = 0; c < d.C; ++c) {
      const float* pc = p + (b * d.C + c) * d.S * d.S;
      const T* wc = weight + (o * d.C + c) * d.K * d.K;
      for (int u = 0; u < d.K; ++u) {
        const std::int64_t ii = i + u - d.r;
        if (ii < 0 || ii >= d.S) continue;
        for (int v = 0; v < d.K; ++v) {
          const std::int64_t jj = j + v - d.r;
          if (jj < 0 || jj >= d.S) continue;
          z = fmaf(to_f(wc[u * d.K + v]), pc[ii * d.S + jj], z);
        }
      }
    }
    y[x] = from_f<TOut>(z);
  }
}

unsigned grid_for(std::int64_t n, int threads) {
  return static_cast<unsigned>(std::max<std::int64_t>(1, std::min<std::int64_t>((n + threads - 1) / threads, 1 << 20)));
}

template <class T>
void run_typed(const Workload& w, const TensorArgs& t, void* scratch, bool out_fp32, cudaStream_t s) {
  const Dims d{w.seq, w.heads_in, w.heads_out, w.batch, w.k, w.r()};
  auto* stats = static_cast<float2*>(scratch);
  const std::int64_t rows = d.B * d.C * d.S;
  float* p = reinterpret_cast<float*>(static_cast<char*>(scratch) + ((rows * sizeof(float2) + 255) / 256) * 256);
  const auto* scores = static_cast<const T*>(t.scores);
  row_stats<T><<<grid_for(rows * 32, 256), 256, 0, s>>>(scores, stats, d);
  MTABENCH_CUDA_CHECK_LAUNCH();
  probabilities<T><<<grid_for(rows * d.S, 256), 256, 0, s>>>(scores, stats, p, d);
  MTABENCH_CUDA_CHECK_LAUNCH();
  const std::int64_t n = d.B * d.O * d.S * d.S;
  if (out_fp32)
    convolve<T, float><<<grid_for(n, 256), 256, 0, s>>>(p, static_cast<const T*>(t.weight), static_cast<const T*>(t.bias), static_cast<float*>(t.y), d);
  else
    convolve<T, T><<<grid_for(n, 256), 256, 0, s>>>(p, static_cast<const T*>(t.weight), static_cast<const T*>(t.bias), static_cast<T*>(t.y), d);
  MTABENCH_CUDA_CHECK_LAUNCH();
}

}  // namespace

std::size_t scratch_bytes(const Workload& w) {
  const std::int64_t rows = w.batch * w.heads_in * w.seq;
  return static_cast<std::size_t>(((rows * 8 + 255) / 256) * 256 + rows * w.seq * 4);
}

void run_gpu(const Workload& w, const TensorArgs& t, void* scratch, bool out_fp32, cudaStream_t stream) {
  switch (w.dtype) {
    case DType::bf16: run_typed<__nv_bfloat16>(w, t, scratch, out_fp32, stream); break;
    case DType::fp16: run_typed<__half>(w, t, scratch, out_fp32, stream); break;
    case DType::fp32: run_typed<float>(w, t, scratch, out_fp32, stream); break;
  }
}

namespace {

class ReferenceGpu final : public Implementation {
 public:
  ImplInfo info() const override {
    ImplInfo i;
    i.name = "reference";
    i.version = "2";  // 2: row statistics past 2^20 blocks of rows (row_stats)
    i.language = "cuda";
    i.license = "Apache-2.0";
    i.source = "impls/reference/reference_gpu.cu";
    i.description = "plain GPU reference: row statistics, fp32 probability tensor, direct convolution (3 kernels)";
    return i;
  }
  Support check_support(const Workload& w, const DeviceInfo* dev) const override {
    if (!dev) return Support::no("needs a CUDA device");
    // The fp32 probability tensor is its scratch: it must fit beside the inputs and outputs.
    const double need = static_cast<double>(scratch_bytes(w)) +
                        static_cast<double>(w.scores_elems() + w.y_elems()) * dtype_size(w.dtype);
    if (need > 0.8 * static_cast<double>(dev->memory_bytes))
      return Support::no("needs " + std::to_string(static_cast<long long>(need / (1 << 20))) +
                         " MiB of device memory for scratch and tensors");
    return Support::yes();
  }
  void initialize(const Workload& w, const DeviceInfo*, cudaStream_t) override {
    w_ = w;
    MTABENCH_CUDA_CALL(cudaMalloc(&scratch_, scratch_bytes(w)));
  }
  void run(const TensorArgs& t, cudaStream_t stream) override { run_gpu(w_, t, scratch_, false, stream); }
  ~ReferenceGpu() override {
    if (scratch_) MTABENCH_CUDA_CALL_NOTHROW(cudaFree(scratch_));
  }

 private:
  Workload w_;
  void* scratch_ = nullptr;
};

}  // namespace

std::unique_ptr<Implementation> make_gpu() { return std::make_unique<ReferenceGpu>(); }

}  // namespace mtabench::reference
