#include "harness/cuda_check.h"

#include <fmt/core.h>

#include <cstdio>

namespace mtabench {

bool CudaError::sticky() const {
  switch (code_) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorMisalignedAddress:
    case cudaErrorIllegalInstruction:
    case cudaErrorInvalidPc:
    case cudaErrorHardwareStackError:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
      return true;
    default:
      return false;
  }
}

void throw_cuda_error(cudaError_t code, const char* call, const char* file, int line) {
  throw CudaError(code, fmt::format("{}:{}: {} failed: {} ({})", file, line, call,
                                    cudaGetErrorName(code), cudaGetErrorString(code)));
}

void report_cuda_error(cudaError_t code, const char* call, const char* file, int line) noexcept {
  std::fprintf(stderr, "mtabench: %s:%d: %s failed: %s\n", file, line, call,
               cudaGetErrorName(code));
}

}  // namespace mtabench
