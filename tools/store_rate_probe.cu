// store-rate-probe: how fast one SM can write to global memory, in the store patterns of the
// fused kernel's warp-specialised path, to tell whether its zero items (~47 GB/s an SM) and its
// consumers' y stores (~22 GB/s an SM: 64 KB an item in ~2.9 us) run at a bound of the SM's store
// path or below it (impls/fused/JOURNAL.md, "v151 measured and merged; v152 and v153": every way
// of moving the zero bytes onto the conv items' SMs cost about what it saved).
// One block an SM (its dynamic shared memory keeps a second block off), on 1, 8 and every SM;
// each block writes zeros over its own REGION bytes (4 MiB by default) with T threads, in one of
// these patterns:
//   v4      16-byte st.global, a warp's 32 lanes on 512 contiguous bytes (4 whole lines), as the
//           zero items; U stores a thread in flight between loop tests
//   v4.cs   the same with .cs (evict-first), the fused kernel's store_stream
//   sector  16-byte st.global.cs, each warp instruction on 16 lines 32 bytes each (two lanes a
//           sector), the lines in 16 planes REGION / 16 apart, as store_ws_rows (a head a plane)
//   bulk    cp.async.bulk shared -> global of a zeroed 16 KiB buffer, lane 0 of each warp issuing
//           its share, one bulk group waited for at the end (v148's zero items)
// Per block: REGION over the %globaltimer span from the block's first store to its last one
// issued (and, for bulk, waited for), the median over blocks ("per SM"); and REGION x blocks
// over the launch's time between CUDA events ("all", which includes the drain to L2; at 1 and 8
// SMs the region fits in L2, so both are SM-to-L2 rates, as the fused kernel's per-SM ones are). A
// warm-up launch, then the timed one. sm_90 (cp.async.bulk); elsewhere it says so and exits 2.
// Usage: store-rate-probe [REGION_MIB]
#define PROBE_NAME "store-rate-probe"
#include "probe_check.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

enum Pattern { kV4 = 0, kV4Cs = 1, kSector = 2, kBulk = 3 };
const char* const kPatternNames[] = {"v4", "v4.cs", "sector", "bulk"};
constexpr int kSmemBytes = 120 * 1024;  // > half an SM's shared memory: one block an SM

// The device helpers only where the kernel has a body (an sm_80 pass would call them unused).
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
constexpr int kBulkBytes = 16384;  // the zeroed shared buffer the bulk copies read

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ __forceinline__ void st16(char* p) {
  asm volatile("st.global.v4.u32 [%0], {%1, %1, %1, %1};" ::"l"(p), "r"(0u) : "memory");
}
__device__ __forceinline__ void st16_cs(char* p) {
  asm volatile("st.global.cs.v4.u32 [%0], {%1, %1, %1, %1};" ::"l"(p), "r"(0u) : "memory");
}
#endif

// Block b writes [b x region, (b + 1) x region) of out; stamps[b] = {start, end} in ns.
template <int P, int U>
__global__ void __launch_bounds__(512, 1) store_kernel(char* out, long long region, unsigned long long* stamps) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ __align__(128) unsigned char smem[];
  char* base = out + static_cast<long long>(blockIdx.x) * region;
  const int tid = threadIdx.x, nthr = blockDim.x, warp = tid >> 5, lane = tid & 31;
  if constexpr (P == kBulk) {
    for (int e = tid; e < kBulkBytes / 16; e += nthr) reinterpret_cast<uint4*>(smem)[e] = make_uint4(0, 0, 0, 0);
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // the zeros, for the bulk copies
  }
  __syncthreads();
  const unsigned long long t0 = global_ns();
  if constexpr (P == kV4 || P == kV4Cs) {
    // Rounds of nthr x 16 bytes; a warp's 32 lanes on 512 contiguous bytes.
    const long long round = static_cast<long long>(nthr) * 16;
    const long long rounds = region / round;
    char* p = base + static_cast<long long>(tid) * 16;
#pragma unroll 1
    for (long long r = 0; r + U <= rounds; r += U, p += U * round)
#pragma unroll
      for (int u = 0; u < U; ++u) {
        if constexpr (P == kV4) st16(p + u * round);
        else st16_cs(p + u * round);
      }
  } else if constexpr (P == kSector) {
    // 16 planes of region / 16; warp w's instruction i: lane l on plane l >> 1, line
    // (i x warps / 4 + w / 4) of it, sector w & 3, half l & 1. A round: nthr x 16 bytes.
    const long long plane = region / 16;
    const int groups = nthr / 128;  // four warps fill a line's four sectors
    const long long rounds = region / (static_cast<long long>(nthr) * 16);
    char* p = base + (lane >> 1) * plane + (warp >> 2) * 128 + (warp & 3) * 32 + (lane & 1) * 16;
    const long long step = static_cast<long long>(groups) * 128;
#pragma unroll 1
    for (long long r = 0; r + U <= rounds; r += U, p += U * step)
#pragma unroll
      for (int u = 0; u < U; ++u) st16_cs(p + u * step);
  } else {
    // Lane 0 of each warp: chunks warp, warp + warps, ... of kBulkBytes.
    if (lane == 0) {
      const unsigned src = static_cast<unsigned>(__cvta_generic_to_shared(smem));
      const long long chunks = region / kBulkBytes;
      for (long long c = warp; c < chunks; c += nthr / 32)
        asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(base + c * kBulkBytes),
                     "r"(src), "n"(kBulkBytes)
                     : "memory");
      asm volatile("cp.async.bulk.commit_group;" ::: "memory");
      asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
    }
  }
  __syncthreads();
  const unsigned long long t1 = global_ns();
  if (tid == 0) {
    stamps[2 * blockIdx.x] = t0;
    stamps[2 * blockIdx.x + 1] = t1;
  }
#else
  __trap();
#endif
}

struct Rate {
  double per_sm_gbs, all_gbs;
};

template <int P, int U>
Rate measure(int blocks, int threads, long long region, char* d_out, unsigned long long* d_stamps) {
  auto kernel = store_kernel<P, U>;
  PROBE_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
  int per_sm = 0;  // the premise of "an SM": one block an SM
  PROBE_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, kSmemBytes));
  if (per_sm != 1) {
    std::fprintf(stderr, PROBE_NAME ": %d blocks fit an SM, not 1\n", per_sm);
    std::exit(1);
  }
  cudaEvent_t e0, e1;
  PROBE_CHECK(cudaEventCreate(&e0));
  PROBE_CHECK(cudaEventCreate(&e1));
  float ms = 0.f;
  for (int run = 0; run < 2; ++run) {  // a warm-up, then the timed launch
    PROBE_CHECK(cudaEventRecord(e0));
    kernel<<<blocks, threads, kSmemBytes>>>(d_out, region, d_stamps);
    PROBE_CHECK(cudaGetLastError());
    PROBE_CHECK(cudaEventRecord(e1));
    PROBE_CHECK(cudaEventSynchronize(e1));
    PROBE_CHECK(cudaEventElapsedTime(&ms, e0, e1));
  }
  PROBE_CHECK(cudaEventDestroy(e0));
  PROBE_CHECK(cudaEventDestroy(e1));
  std::vector<unsigned long long> s(2 * static_cast<size_t>(blocks));
  PROBE_CHECK(cudaMemcpy(s.data(), d_stamps, sizeof(unsigned long long) * s.size(), cudaMemcpyDeviceToHost));
  std::vector<double> per;
  for (int b = 0; b < blocks; ++b) per.push_back(static_cast<double>(region) / static_cast<double>(s[2 * b + 1] - s[2 * b]));
  std::nth_element(per.begin(), per.begin() + blocks / 2, per.end());
  return {per[blocks / 2], static_cast<double>(region) * blocks / (static_cast<double>(ms) * 1e6)};
}

template <int P, int U>
void row(const std::vector<int>& sm_counts, long long region, char* d_out, unsigned long long* d_stamps) {
  for (int threads : {128, 256, 512}) {
    std::printf("%-7s U %d T %3d", kPatternNames[P], U, threads);
    for (int sms : sm_counts) {
      const Rate r = measure<P, U>(sms, threads, region, d_out, d_stamps);
      std::printf(" | %3d SMs: %6.1f GB/s an SM, %7.1f all", sms, r.per_sm_gbs, r.all_gbs);
    }
    std::printf("\n");
  }
}

}  // namespace

int main(int argc, char** argv) {
  const long long mib = argc > 1 ? std::atoll(argv[1]) : 4;
  const long long region = mib > 0 ? mib * (1ll << 20) : 0;
  int dev = 0;
  cudaDeviceProp prop{};
  PROBE_CHECK(cudaGetDevice(&dev));
  PROBE_CHECK(cudaGetDeviceProperties(&prop, dev));
  if (prop.major < 9) {
    std::printf(PROBE_NAME ": needs an sm_90 GPU or later (this is sm_%d%d)\n", prop.major, prop.minor);
    return 2;
  }
  // A whole number of MiB is whole rounds of every pattern (U up to 8) and whole bulk chunks.
  if (region <= 0) {
    std::fprintf(stderr, PROBE_NAME ": REGION_MIB must be a positive whole number of MiB\n");
    return 1;
  }
  const int all = prop.multiProcessorCount;
  const std::vector<int> sm_counts = {1, 8, all};
  char* d_out = nullptr;
  unsigned long long* d_stamps = nullptr;
  PROBE_CHECK(cudaMalloc(&d_out, region * all));
  PROBE_CHECK(cudaMalloc(&d_stamps, sizeof(unsigned long long) * 2 * all));
  std::printf(PROBE_NAME ": %s, %d SMs; zeros over %lld MiB a block, one block an SM; \"an SM\": the median\n"
              "block's bytes over its %%globaltimer span (first store to last issued; bulk: to its wait);\n"
              "\"all\": every block's bytes over the launch between CUDA events (with the drain to L2)\n",
              prop.name, all, region >> 20);
  row<kV4, 1>(sm_counts, region, d_out, d_stamps);
  row<kV4, 4>(sm_counts, region, d_out, d_stamps);
  row<kV4Cs, 1>(sm_counts, region, d_out, d_stamps);
  row<kV4Cs, 4>(sm_counts, region, d_out, d_stamps);
  row<kV4Cs, 8>(sm_counts, region, d_out, d_stamps);
  row<kSector, 1>(sm_counts, region, d_out, d_stamps);
  row<kSector, 4>(sm_counts, region, d_out, d_stamps);
  row<kBulk, 1>(sm_counts, region, d_out, d_stamps);
  PROBE_CHECK(cudaFree(d_out));
  PROBE_CHECK(cudaFree(d_stamps));
  return 0;
}
