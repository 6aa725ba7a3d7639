#pragma once
// One error policy for CUDA calls (after nvbench's NVBENCH_CUDA_CALL): a failed call throws
// CudaError naming the file, the line, the call's text and the error's name. Destructors use
// MTABENCH_CUDA_CALL_NOTHROW, which only reports.
#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace mtabench {

class CudaError : public std::runtime_error {
 public:
  CudaError(cudaError_t code, const std::string& what) : std::runtime_error(what), code_(code) {}
  cudaError_t code() const { return code_; }
  // Errors after which the context is unusable (illegal address, launch failure, ...): the
  // process must not run anything else on the device.
  bool sticky() const;

 private:
  cudaError_t code_;
};

[[noreturn]] void throw_cuda_error(cudaError_t code, const char* call, const char* file, int line);
void report_cuda_error(cudaError_t code, const char* call, const char* file, int line) noexcept;

}  // namespace mtabench

#define MTABENCH_CUDA_CALL(call)                                               \
  do {                                                                         \
    const cudaError_t mtabench_err_ = (call);                                  \
    if (mtabench_err_ != cudaSuccess)                                          \
      ::mtabench::throw_cuda_error(mtabench_err_, #call, __FILE__, __LINE__);  \
  } while (false)

#define MTABENCH_CUDA_CALL_NOTHROW(call)                                       \
  do {                                                                         \
    const cudaError_t mtabench_err_ = (call);                                  \
    if (mtabench_err_ != cudaSuccess)                                          \
      ::mtabench::report_cuda_error(mtabench_err_, #call, __FILE__, __LINE__); \
  } while (false)

// After a kernel launch: the launch configuration error, if any.
#define MTABENCH_CUDA_CHECK_LAUNCH() MTABENCH_CUDA_CALL(cudaGetLastError())
