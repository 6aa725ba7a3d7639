// cluster-probe: what the fused kernel's single-read design would cost on this GPU, measured
// before it is built (impls/fused/JOURNAL.md, "Design: one read of the scores, a row band held
// by a thread-block cluster"). Three parts, each line saying how it was measured:
//   1. clusters: how many clusters of N CTAs (N 1-16, 256 threads) at a given shared memory
//      per CTA run at once (cudaOccupancyMaxActiveClusters), and how many of the SMs' CTA slots
//      their placement leaves unused;
//   2. merge: one band's statistics exchange, partials of 72 (row, channel) pairs in every CTA's
//      shared memory merged by each CTA over distributed shared memory between two cluster
//      barriers, in cycles per band (clock64, the mean over 2,000 bands, per CTA; min/median/max
//      over CTAs; one CTA an SM);
//   3. stream: a seq 4096 bf16 batch 2 band schedule with no math: each persistent cluster takes
//      bands, its CTAs bulk-copy their slices of 72 rows (cp.async.bulk on an mbarrier) into
//      shared memory, read them once (WORK FMAs a 4-byte word model the math), meet at a cluster
//      barrier (the statistics' exchange), and stream twice the bytes out (y, half of it zeros);
//      the time of one launch (CUDA events, median of 5 after a warm-up) against a
//      cudaMemcpyAsync that moves as many bytes (read + written), with the CTAs an SM each
//      slice size allows (the overlap between clusters differs with it).
// sm_90 and up (clusters, bulk copies); built everywhere, it says so and exits 2 elsewhere.
// Usage: cluster-probe
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cooperative_groups.h>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define PROBE_NAME "cluster-probe"
#include "probe_check.h"

namespace cg = cooperative_groups;


namespace {

constexpr int kThreads = 256;
constexpr int kPairs = 72; // (row, channel) pairs of a band: 18 halo rows x 4 channels (k 3, R 16)

// ---- part 2: the statistics' exchange ----------------------------------------------------------
__global__ void merge_kernel(int bands, long long* cycles, float* sink) {
#if __CUDA_ARCH__ >= 900
  __shared__ float2 part[kPairs];
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned n = cluster.num_blocks();
  float acc = 0.f;
  const long long t0 = clock64();
  for (int it = 0; it < bands; ++it) {
    for (int i = threadIdx.x; i < kPairs; i += blockDim.x)
      part[i] = make_float2(static_cast<float>(it + i), 1.f);
    cluster.sync(); // every CTA's partials written
    for (int i = threadIdx.x; i < kPairs; i += blockDim.x) {
      float m = -INFINITY, l = 0.f;
      for (unsigned r = 0; r < n; ++r) {
        const float2 v = cluster.map_shared_rank(part, r)[i];
        const float mm = fmaxf(m, v.x);
        l = l * exp2f(m - mm) + v.y * exp2f(v.x - mm);
        m = mm;
      }
      acc += m + l;
    }
    cluster.sync(); // every CTA done reading before the next band's partials
  }
  const long long t1 = clock64();
  if (threadIdx.x == 0) cycles[blockIdx.x] = (t1 - t0) / bands;
  if (acc == 1.2345e-30f) sink[0] = acc; // keeps the merge; never true
#else
  if (threadIdx.x == 0 && blockIdx.x == 0 && bands < 0) sink[0] = static_cast<float>(cycles[0]);
#endif
}

// ---- part 3: the band schedule -----------------------------------------------------------------
struct StreamArgs {
  const char* src; // bands x N x slice bytes
  char* dst;       // twice that
  int bands;       // band b's slice a CTA: slice (b + 1) / bands bytes, in 72 rows
  int slice;       // bytes a CTA at the largest band (a multiple of 72 x 16)
  int work;        // FMAs a 4-byte word
  float* sink;
};

#if __CUDA_ARCH__ >= 900
__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
#endif

__global__ void stream_kernel(StreamArgs a) {
#if __CUDA_ARCH__ >= 900
  extern __shared__ __align__(16) char buf[];
  __shared__ __align__(8) unsigned long long bar;
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned n = cluster.num_blocks(), rank = cluster.block_rank();
  unsigned cid, ncl;
  asm("mov.u32 %0, %%clusterid.x;" : "=r"(cid));
  asm("mov.u32 %0, %%nclusterid.x;" : "=r"(ncl));
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(&bar)), "r"(blockDim.x)
                 : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  const int row_stride = a.slice / kPairs; // bytes a row at the largest band
  float acc = 0.f;
  for (int b = static_cast<int>(cid); b < a.bands; b += static_cast<int>(ncl)) {
    const int row_bytes = static_cast<int>(static_cast<long long>(row_stride) * (b + 1) / a.bands) / 16 * 16;
    const char* src = a.src + (static_cast<long long>(b) * n + rank) * a.slice;
    // the copies: one a row, by the first 72 threads
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); // last band's reads before these writes
    if (threadIdx.x < kPairs && row_bytes > 0) {
      const unsigned dst = smem_addr(buf + threadIdx.x * row_stride);
      asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(&bar)),
                   "r"(row_bytes)
                   : "memory");
      asm volatile(
          "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
              dst),
          "l"(src + threadIdx.x * row_stride), "r"(row_bytes), "r"(smem_addr(&bar))
          : "memory");
    }
    unsigned long long state;
    asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1];" : "=l"(state) : "r"(smem_addr(&bar)) : "memory");
    unsigned done = 0;
    while (!done)
      asm volatile(
          "{\n.reg .pred p;\nmbarrier.try_wait.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}"
          : "=r"(done)
          : "r"(smem_addr(&bar)), "l"(state)
          : "memory");
    // the read (and WORK FMAs a word): the statistics' fold and the fill's math, modelled
    const int words = row_bytes / 4;
    for (int e = threadIdx.x; e < kPairs * words; e += blockDim.x) {
      const int row = e / words, w = e - row * words;
      float v = reinterpret_cast<const float*>(buf + row * row_stride)[w];
      for (int k = 0; k < a.work; ++k)
        v = fmaf(v, 0.999f, 0.5f);
      acc += v;
    }
    cluster.sync(); // the statistics' exchange
    // y: twice the bytes read, streamed (evict-first)
    float4* out = reinterpret_cast<float4*>(a.dst + 2 * ((static_cast<long long>(b) * n + rank) * a.slice));
    const int vecs = 2 * kPairs * row_bytes / 16;
    for (int e = threadIdx.x; e < vecs; e += blockDim.x)
      __stcs(out + e, make_float4(acc, 0.f, 0.f, 0.f));
    __syncthreads(); // the buffer is read before the next band's copies
  }
  if (acc == 1.2345e-30f) a.sink[0] = acc;
#else
  if (threadIdx.x == 0 && blockIdx.x == 0 && a.bands < 0) a.sink[0] = 0.f;
#endif
}

cudaLaunchConfig_t cluster_config(int n, int clusters, int smem, cudaLaunchAttribute* attr) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(static_cast<unsigned>(n * std::max(clusters, 1)));
  cfg.blockDim = dim3(kThreads);
  cfg.dynamicSmemBytes = static_cast<size_t>(smem);
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = static_cast<unsigned>(n);
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  return cfg;
}

int blocks_per_sm(const void* kernel, int smem) {
  int blocks = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, kThreads, static_cast<size_t>(smem)) !=
      cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return blocks;
}

int max_clusters(const void* kernel, int n, int smem) {
  cudaLaunchAttribute attr[1];
  const cudaLaunchConfig_t cfg = cluster_config(n, 1, smem, attr);
  int clusters = 0;
  if (cudaOccupancyMaxActiveClusters(&clusters, kernel, &cfg) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return clusters;
}

} // namespace

int main() {
  int dev = 0;
  cudaDeviceProp prop{};
  PROBE_CHECK(cudaGetDevice(&dev));
  PROBE_CHECK(cudaGetDeviceProperties(&prop, dev));
  int khz = 0;
  PROBE_CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev));
  const double mhz = khz / 1000.0;
  std::printf("cluster-probe: %s, %d SMs, %zu bytes of shared memory a block (opt-in), %.0f MHz\n", prop.name,
              prop.multiProcessorCount, prop.sharedMemPerBlockOptin, mhz);
  if (prop.major < 9) {
    std::printf("cluster-probe: compute capability %d.%d: clusters and bulk copies need 9.0 or later\n",
                prop.major, prop.minor);
    return 2;
  }
  const void* stream_fn = reinterpret_cast<const void*>(&stream_kernel);
  const void* merge_fn = reinterpret_cast<const void*>(&merge_kernel);
  const int smem_max = static_cast<int>(prop.sharedMemPerBlockOptin) - 1024;
  PROBE_CHECK(cudaFuncSetAttribute(stream_fn, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_max));
  PROBE_CHECK(cudaFuncSetAttribute(stream_fn, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  PROBE_CHECK(cudaFuncSetAttribute(merge_fn, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  PROBE_CHECK(cudaFuncSetAttribute(merge_fn, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_max));

  // 1. clusters at once
  const int ns[] = {1, 2, 4, 8, 16};
  const int kbs[] = {74, 82, 110, 147, 200};
  for (int kb : kbs)
    for (int n : ns) {
      const int c = max_clusters(stream_fn, n, kb * 1024), per_sm = blocks_per_sm(stream_fn, kb * 1024);
      std::printf(
          "clusters: N %2d, %3d KB a CTA: %3d clusters at once = %3d CTAs, of %3d CTA slots (%d an SM x %d "
          "SMs): %d slots lost to cluster placement (cudaOccupancyMaxActiveClusters, "
          "cudaOccupancyMaxActiveBlocksPerMultiprocessor)\n",
          n, kb, c, c * n, per_sm * prop.multiProcessorCount, per_sm, prop.multiProcessorCount,
          std::max(per_sm * prop.multiProcessorCount - c * n, 0));
    }

  // 2. the statistics' exchange
  float* sink = nullptr;
  PROBE_CHECK(cudaMalloc(&sink, sizeof(float)));
  for (int n : {2, 4, 8, 16}) {
    // smem_max of dynamic shared memory (unused) holds it to one CTA an SM: the exchange's own
    // latency, not eight CTAs' sharing an SM
    const int clusters = max_clusters(merge_fn, n, smem_max);
    if (clusters == 0) {
      std::printf("merge: N %2d: no cluster fits\n", n);
      continue;
    }
    long long* cycles = nullptr;
    PROBE_CHECK(cudaMalloc(&cycles, sizeof(long long) * n * clusters));
    cudaLaunchAttribute attr[1];
    const cudaLaunchConfig_t cfg = cluster_config(n, clusters, smem_max, attr);
    constexpr int kBands = 2000;
    PROBE_CHECK(cudaLaunchKernelEx(&cfg, merge_kernel, kBands, cycles, sink));
    PROBE_CHECK(cudaDeviceSynchronize());
    std::vector<long long> c(static_cast<size_t>(n * clusters));
    PROBE_CHECK(cudaMemcpy(c.data(), cycles, sizeof(long long) * c.size(), cudaMemcpyDeviceToHost));
    std::sort(c.begin(), c.end());
    std::printf(
        "merge: N %2d, %3d clusters: %lld / %lld / %lld cycles a band (min / median / max over CTAs; "
        "%.0f ns at the median at the %.0f MHz maximum clock; one CTA an SM): 2 cluster barriers + %d x N "
        "float2 read over DSMEM\n",
        n, clusters, c.front(), c[c.size() / 2], c.back(), c[c.size() / 2] * 1000.0 / mhz, mhz, kPairs);
    PROBE_CHECK(cudaFree(cycles));
  }

  // 3. the band schedule: seq 4096, bf16, batch 2, R 16 -> 512 bands; the largest band's 590 KB
  // split over N CTAs
  constexpr long long kBandMax = 18LL * 4 * 4096 * 2;
  constexpr int kBands = 512;
  struct Config {
    int n, work;
  };
  const Config configs[] = {{4, 0}, {8, 0}, {16, 0}, {4, 16}, {8, 16}};
  long long alloc = 0;
  for (const Config& c : configs)
    alloc = std::max(alloc, static_cast<long long>(kBands) * ((kBandMax / c.n + 1151) / 1152 * 1152) * c.n);
  char *src = nullptr, *dst = nullptr;
  PROBE_CHECK(cudaMalloc(&src, static_cast<size_t>(alloc)));
  PROBE_CHECK(cudaMalloc(&dst, static_cast<size_t>(2 * alloc)));
  PROBE_CHECK(cudaMemset(src, 0, static_cast<size_t>(alloc)));
  cudaEvent_t e0, e1;
  PROBE_CHECK(cudaEventCreate(&e0));
  PROBE_CHECK(cudaEventCreate(&e1));
  const auto median_ms = [&](auto&& launch) {
    launch();
    PROBE_CHECK(cudaDeviceSynchronize());
    std::vector<float> t;
    for (int k = 0; k < 5; ++k) {
      PROBE_CHECK(cudaEventRecord(e0));
      launch();
      PROBE_CHECK(cudaEventRecord(e1));
      PROBE_CHECK(cudaEventSynchronize(e1));
      float ms = 0.f;
      PROBE_CHECK(cudaEventElapsedTime(&ms, e0, e1));
      t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  };
  for (const Config& c : configs) {
    const int slice =
        static_cast<int>((kBandMax / c.n + 1151) / 1152 * 1152); // 72 rows of whole 16-byte chunks
    if (slice > smem_max) {
      std::printf("stream: N %2d: a %d-byte slice does not fit\n", c.n, slice);
      continue;
    }
    const int clusters = max_clusters(stream_fn, c.n, slice);
    if (clusters == 0) {
      std::printf("stream: N %2d: no cluster fits\n", c.n);
      continue;
    }
    long long bytes_read = 0;
    for (int b = 0; b < kBands; ++b)
      bytes_read += static_cast<long long>(c.n) * kPairs * ((slice / kPairs) * (b + 1LL) / kBands / 16 * 16);
    const StreamArgs args{src, dst, kBands, slice, c.work, sink};
    cudaLaunchAttribute attr[1];
    const cudaLaunchConfig_t cfg = cluster_config(c.n, clusters, slice, attr);
    const float ms = median_ms([&] { PROBE_CHECK(cudaLaunchKernelEx(&cfg, stream_kernel, args)); });
    // the copy rate: cudaMemcpyAsync of as many bytes as the schedule moves (read + written)
    const float copy_ms = median_ms([&] {
      PROBE_CHECK(
          cudaMemcpyAsync(dst, src, static_cast<size_t>(3 * bytes_read / 2), cudaMemcpyDeviceToDevice));
    });
    const double moved = 3.0 * bytes_read; // read once, written twice
    std::printf(
        "stream: N %2d, %2d FMAs a word, %3d clusters of %d-byte slices (%d CTAs an SM): %.1f us for %.1f MB "
        "read + %.1f MB written, %.0f GB/s, %.2fx the copy's time (cudaMemcpyAsync of %.1f MB: %.1f us, "
        "%.0f GB/s read + written); medians of 5 launches, CUDA events\n",
        c.n, c.work, clusters, slice, blocks_per_sm(stream_fn, slice), ms * 1e3, bytes_read / 1e6,
        2.0 * bytes_read / 1e6, moved / (ms * 1e6), ms / copy_ms, 1.5 * bytes_read / 1e6, copy_ms * 1e3,
        moved / (copy_ms * 1e6));
  }
  PROBE_CHECK(cudaFree(src));
  PROBE_CHECK(cudaFree(dst));
  PROBE_CHECK(cudaFree(sink));
  return 0;
}
