#pragma once
// Device memory the harness owns for one case, and the small device operations it runs on it
// outside the timed region: generating inputs, poisoning the output, fingerprinting inputs.
#include "harness/cuda_check.h"
#include "harness/tensors.h"
#include "harness/workload.h"

#include <cuda_runtime_api.h>

#include <cstdint>

namespace mtabench {

// cudaMalloc'd bytes, freed on destruction.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) { o.ptr_ = nullptr, o.bytes_ = 0; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* get() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

// The four tensors of one workload on the device.
struct DeviceTensors {
  DeviceBuffer scores, weight, bias, y;
  explicit DeviceTensors(const Workload& w);
};

// Which input set each tensor is drawn from (weight/bias and scores can change separately).
struct InputSets {
  std::uint64_t scores = 0, params = 0;
};

void generate_inputs_device(const Workload& w, std::uint64_t seed, InputSets sets, DeviceTensors& t,
                            cudaStream_t stream);
// All bits set: NaN in bf16, fp16 and fp32, so an element left unwritten is found.
void poison_output(DeviceTensors& t, cudaStream_t stream);
// Order-independent 64-bit fingerprint of a tensor's elements (for detecting input mutation),
// and the same fingerprint of what the generator produces for (seed, tensor, set) without
// storing it: equal exactly when the tensor holds what was generated.
std::uint64_t fingerprint_device(const void* p, DType t, std::int64_t elems, cudaStream_t stream);
std::uint64_t fingerprint_generated(DType t, std::int64_t elems, std::uint64_t key, float sd,
                                    cudaStream_t stream);
// How many elements of y no longer hold the poison pattern (synchronous on `stream`). It runs
// while another stream is deliberately held, so it must not synchronize the device: `counter`
// is 8 bytes of device memory and `host_result` 8 bytes of pinned host memory, both owned by
// the caller (cudaFree and copies to pageable memory can wait for every stream).
std::int64_t count_written_device(const DeviceTensors& t, DType dtype, std::int64_t elems,
                                  unsigned long long* counter, unsigned long long* host_result,
                                  cudaStream_t stream);
// The same count, only enqueued on `stream` into `counter` (read it after synchronizing).
void count_written_enqueue(const DeviceTensors& t, DType dtype, std::int64_t elems,
                           unsigned long long* counter, cudaStream_t stream);
// Copies the inputs (and y) back to the host.
HostInputs download_inputs(const Workload& w, const DeviceTensors& t);
HostTensor download_output(const Workload& w, const DeviceTensors& t);

}  // namespace mtabench
