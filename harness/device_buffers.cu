#include "harness/device_buffers.h"
#include "harness/device_dtype.cuh"
#include "harness/rng.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace mtabench {

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  MTABENCH_CUDA_CALL(cudaMalloc(&ptr_, bytes ? bytes : 1));
}
DeviceBuffer::~DeviceBuffer() {
  if (ptr_) MTABENCH_CUDA_CALL_NOTHROW(cudaFree(ptr_));
}
DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    if (ptr_) MTABENCH_CUDA_CALL_NOTHROW(cudaFree(ptr_));
    ptr_ = o.ptr_;
    bytes_ = o.bytes_;
    o.ptr_ = nullptr;
    o.bytes_ = 0;
  }
  return *this;
}

DeviceTensors::DeviceTensors(const Workload& w)
    : scores(static_cast<std::size_t>(w.scores_elems()) * dtype_size(w.dtype)),
      weight(static_cast<std::size_t>(w.weight_elems()) * dtype_size(w.dtype)),
      bias(static_cast<std::size_t>(w.bias_elems()) * dtype_size(w.dtype)),
      y(static_cast<std::size_t>(w.y_elems()) * dtype_size(w.dtype)) {}

namespace {

template <class T>
__global__ void generate_kernel(T* out, std::int64_t n, std::uint64_t key, float sd) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    out[i] = from_f<T>(rng::normal(key, static_cast<std::uint64_t>(i)) * sd);
}

template <class T>
void generate(void* p, std::int64_t n, std::uint64_t key, float sd, cudaStream_t s) {
  const int threads = 256;
  const std::int64_t blocks = std::min<std::int64_t>((n + threads - 1) / threads, 132 * 32);
  generate_kernel<T><<<static_cast<unsigned>(std::max<std::int64_t>(blocks, 1)), threads, 0, s>>>(static_cast<T*>(p), n, key, sd);
  MTABENCH_CUDA_CHECK_LAUNCH();
}

void generate_any(DType t, void* p, std::int64_t n, std::uint64_t key, float sd, cudaStream_t s) {
  switch (t) {
    case DType::bf16: generate<__nv_bfloat16>(p, n, key, sd, s); break;
    case DType::fp16: generate<__half>(p, n, key, sd, s); break;
    case DType::fp32: generate<float>(p, n, key, sd, s); break;
  }
}

__device__ __forceinline__ unsigned long long fp_term(std::uint32_t bits, std::int64_t i) {
  return rng::mix64(bits ^ rng::mix64(static_cast<std::uint64_t>(i) + 0x51ed270b27f3e6a1ull));
}
template <class U>
__global__ void fingerprint_kernel(const U* p, std::int64_t n, unsigned long long* out) {
  unsigned long long acc = 0;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    acc += fp_term(p[i], i);
  atomicAdd(out, acc);
}
template <class T>
__device__ __forceinline__ std::uint32_t bits_of(T v) {
  if constexpr (sizeof(T) == 4) return __float_as_uint(v);
  else return static_cast<std::uint32_t>(*reinterpret_cast<const unsigned short*>(&v));
}
template <class T>
__global__ void fingerprint_generated_kernel(std::int64_t n, std::uint64_t key, float sd, unsigned long long* out) {
  unsigned long long acc = 0;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    acc += fp_term(bits_of(from_f<T>(rng::normal(key, static_cast<std::uint64_t>(i)) * sd)), i);
  atomicAdd(out, acc);
}

std::uint64_t read_accumulator(const void* acc, cudaStream_t stream) {
  unsigned long long h = 0;
  MTABENCH_CUDA_CALL(cudaMemcpyAsync(&h, acc, sizeof h, cudaMemcpyDeviceToHost, stream));
  MTABENCH_CUDA_CALL(cudaStreamSynchronize(stream));
  return h;
}

template <class U>
__global__ void count_written_kernel(const U* p, std::int64_t n, U poison, unsigned long long* out) {
  unsigned long long c = 0;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    c += p[i] != poison;
  if (c) atomicAdd(out, c);
}

}  // namespace

void generate_inputs_device(const Workload& w, std::uint64_t seed, InputSets sets, DeviceTensors& t,
                            cudaStream_t stream) {
  const InputScales s = input_scales(w);
  generate_any(w.dtype, t.scores.get(), w.scores_elems(), rng::stream_key(seed, rng::kScores, sets.scores), s.scores, stream);
  generate_any(w.dtype, t.weight.get(), w.weight_elems(), rng::stream_key(seed, rng::kWeight, sets.params), s.weight, stream);
  generate_any(w.dtype, t.bias.get(), w.bias_elems(), rng::stream_key(seed, rng::kBias, sets.params), s.bias, stream);
}

void poison_output(DeviceTensors& t, cudaStream_t stream) {
  MTABENCH_CUDA_CALL(cudaMemsetAsync(t.y.get(), 0xff, t.y.bytes(), stream));
}

std::uint64_t fingerprint_device(const void* p, DType t, std::int64_t elems, cudaStream_t stream) {
  DeviceBuffer acc(sizeof(unsigned long long));
  MTABENCH_CUDA_CALL(cudaMemsetAsync(acc.get(), 0, sizeof(unsigned long long), stream));
  auto* out = static_cast<unsigned long long*>(acc.get());
  if (t == DType::fp32)
    fingerprint_kernel<std::uint32_t><<<1024, 256, 0, stream>>>(static_cast<const std::uint32_t*>(p), elems, out);
  else
    fingerprint_kernel<std::uint16_t><<<1024, 256, 0, stream>>>(static_cast<const std::uint16_t*>(p), elems, out);
  MTABENCH_CUDA_CHECK_LAUNCH();
  return read_accumulator(acc.get(), stream);
}

std::uint64_t fingerprint_generated(DType t, std::int64_t elems, std::uint64_t key, float sd,
                                    cudaStream_t stream) {
  DeviceBuffer acc(sizeof(unsigned long long));
  MTABENCH_CUDA_CALL(cudaMemsetAsync(acc.get(), 0, sizeof(unsigned long long), stream));
  auto* out = static_cast<unsigned long long*>(acc.get());
  switch (t) {
    case DType::bf16: fingerprint_generated_kernel<__nv_bfloat16><<<1024, 256, 0, stream>>>(elems, key, sd, out); break;
    case DType::fp16: fingerprint_generated_kernel<__half><<<1024, 256, 0, stream>>>(elems, key, sd, out); break;
    case DType::fp32: fingerprint_generated_kernel<float><<<1024, 256, 0, stream>>>(elems, key, sd, out); break;
  }
  MTABENCH_CUDA_CHECK_LAUNCH();
  return read_accumulator(acc.get(), stream);
}

void count_written_enqueue(const DeviceTensors& t, DType dtype, std::int64_t elems,
                           unsigned long long* out, cudaStream_t stream) {
  MTABENCH_CUDA_CALL(cudaMemsetAsync(out, 0, sizeof(unsigned long long), stream));
  if (dtype == DType::fp32)
    count_written_kernel<std::uint32_t><<<1024, 256, 0, stream>>>(static_cast<const std::uint32_t*>(t.y.get()), elems, 0xffffffffu, out);
  else
    count_written_kernel<std::uint16_t><<<1024, 256, 0, stream>>>(static_cast<const std::uint16_t*>(t.y.get()), elems, std::uint16_t{0xffff}, out);
  MTABENCH_CUDA_CHECK_LAUNCH();
}

std::int64_t count_written_device(const DeviceTensors& t, DType dtype, std::int64_t elems,
                                  unsigned long long* out, unsigned long long* host_result,
                                  cudaStream_t stream) {
  count_written_enqueue(t, dtype, elems, out, stream);
  MTABENCH_CUDA_CALL(cudaMemcpyAsync(host_result, out, sizeof(unsigned long long), cudaMemcpyDeviceToHost, stream));
  MTABENCH_CUDA_CALL(cudaStreamSynchronize(stream));
  return static_cast<std::int64_t>(*host_result);
}

HostInputs download_inputs(const Workload& w, const DeviceTensors& t) {
  HostInputs in{HostTensor(w.dtype, static_cast<std::size_t>(w.scores_elems())),
                HostTensor(w.dtype, static_cast<std::size_t>(w.weight_elems())),
                HostTensor(w.dtype, static_cast<std::size_t>(w.bias_elems()))};
  MTABENCH_CUDA_CALL(cudaMemcpy(in.scores.data(), t.scores.get(), in.scores.size_bytes(), cudaMemcpyDeviceToHost));
  MTABENCH_CUDA_CALL(cudaMemcpy(in.weight.data(), t.weight.get(), in.weight.size_bytes(), cudaMemcpyDeviceToHost));
  MTABENCH_CUDA_CALL(cudaMemcpy(in.bias.data(), t.bias.get(), in.bias.size_bytes(), cudaMemcpyDeviceToHost));
  return in;
}

HostTensor download_output(const Workload& w, const DeviceTensors& t) {
  HostTensor y(w.dtype, static_cast<std::size_t>(w.y_elems()));
  MTABENCH_CUDA_CALL(cudaMemcpy(y.data(), t.y.get(), y.size_bytes(), cudaMemcpyDeviceToHost));
  return y;
}

}  // namespace mtabench
