#pragma once
// The GPU probes' check of a CUDA call (cluster-probe, wgmma-rate-probe): a failure prints the
// probe's name (PROBE_NAME, defined before this is included), the call, the error and where,
// and exits 1.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#ifndef PROBE_NAME
#error "define PROBE_NAME before including probe_check.h"
#endif

#define PROBE_CHECK(x)                                                                                       \
  do {                                                                                                       \
    const cudaError_t e_ = (x);                                                                              \
    if (e_ != cudaSuccess) {                                                                                 \
      std::fprintf(stderr, PROBE_NAME ": %s: %s (%s:%d)\n", #x, cudaGetErrorString(e_), __FILE__, __LINE__); \
      std::exit(1);                                                                                          \
    }                                                                                                        \
  } while (0)
