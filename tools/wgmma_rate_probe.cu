// wgmma-rate-probe: how fast W warp groups of one SM issue the fused kernel's wgmma shapes, to
// tell whether one warp group alone keeps the tensor pipe busy at N 32 (the warp-specialised
// kernel's k 7 heads 32; impls/fused/JOURNAL.md, "v119 merged ... v121", the ping-pong question).
// Each warp group of a block issues ITER rounds of one wgmma m64nNk16 (bf16 in, fp32
// accumulators) into each of 8 accumulator sets (as the register-A contraction's 8 output rows;
// 4 at N 64, for registers), in commit groups of G, A from registers (RS, the fused kernel's form) or from shared memory (SS), B from
// shared memory (no swizzle, core matrices as load_weight_cores lays them out); after each group
// it waits for all but the last group (wgmma.wait_group 1), as rs_window_columns does. One block
// an SM, every SM; the SM's rate is its W warp groups' wgmmas over the cycles from the first
// group's start to the last one's end (clock64), the median over SMs; MACs a cycle = 64 N 16 a
// wgmma over that. Operand values are small random numbers (the tensor pipe's rate does not
// depend on them, but zeros could be special-cased). Launch: a warm-up, then the timed one.
// The last three rows (v153's question, and MTABENCH_WS_WAIT's) run the warp-specialised
// consumers' own k 7 stream instead, at W 1-2 (rs_window_columns, its fragments by ldmatrix): 2 (ITER / 16)
// passes of tile rows 0..13, each a commit group of WIN x (taps landing in the 8 output rows)
// wgmmas, 1-7 at WIN 1 and 2-14 at WIN 2 (56 WIN a pass), wait_group W after each.
// sm_90a only (wgmma); elsewhere it says so and exits 2.
// Usage: wgmma-rate-probe [ITER]
#include "impls/fused/fused_wgmma.cuh"

#define PROBE_NAME "wgmma-rate-probe"
#include "probe_check.h"

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

using mtabench::fused::desc_of;
using mtabench::fused::smem_desc_lo;


namespace {

// Accumulator sets, as the register-A contraction's 8 output rows (4 at N 64: 128 registers).
template <int N>
constexpr int kSets = N <= 32 ? 8 : 4;

// Shared memory: A (64 x 16 bf16, 2 KB: 8 row groups x 2 k halves of 128-byte core matrices) and
// B (16 x N: N / 8 head groups x 2 k halves), then the per-warp-group cycle stamps.
template <int N>
struct Layout {
  static constexpr int a_bytes = 2048, b_bytes = 16 * N * 2;
  static constexpr int bytes = a_bytes + b_bytes;
};

// WIN > 0 (RS, N 32 only): instead of uniform groups, the warp-specialised consumers' own stream
// at k 7: the kernel's rs_window_columns with WIN window columns a commit group and W groups left
// in flight after each wait (MTABENCH_WS_WAIT's W), its fragments loaded by ldmatrix from
// shared memory (every tile row from the same bytes: row_b 0) and chained as rs_window_row chains
// them (sets 0 then 2, no drain between). Per pass, tile rows 0..13, each a commit group of WIN x
// (taps landing in the 8 output rows) wgmmas: 1-7 HGMMAs at WIN 1, 2-14 at WIN 2, 56 WIN a pass.
// Threads a block: three warp groups, or two for the window stream, whose fragment sets and
// addresses need more than the 168 registers of 384 threads (there ptxas serialized its wgmmas).
template <int WIN>
constexpr int kBlockThreads = WIN > 0 ? 256 : 384;

template <int N, bool RS, int G, int WIN = 0, int W = 1>
__global__ void __launch_bounds__(kBlockThreads<WIN>, 1) rate_kernel(int iter, int w, long long* cycles, float* sink) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ __align__(128) unsigned char smem[];
  using L = Layout<N>;
  // Small pseudo-random bf16 values in both operands (A's registers too).
  for (int e = threadIdx.x; e < L::bytes / 2; e += blockDim.x) {
    const unsigned h = (e * 2654435761u) >> 20;
    reinterpret_cast<__nv_bfloat16*>(smem)[e] = __float2bfloat16(static_cast<float>(h & 63) / 64.f - 0.5f);
  }
  __syncthreads();
  const int wg = threadIdx.x >> 7;
  if (wg >= w) return;
  const unsigned base = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  // A: core matrices [k half][row group] 128 bytes each: LBO (next k half) 1024, SBO (next 8 rows) 128.
  const unsigned long long a_desc = desc_of(smem_desc_lo(base, 1024), 128u >> 4);
  // B: [k half][head group][8 heads x 8 k]: LBO (next k half) N / 8 x 128, SBO (next 8 heads) 128.
  const unsigned long long b_desc = desc_of(smem_desc_lo(base + L::a_bytes, N / 8 * 128), 128u >> 4);
  unsigned a_r[4];
#pragma unroll
  for (int x = 0; x < 4; ++x) a_r[x] = reinterpret_cast<const unsigned*>(smem)[(threadIdx.x * 4 + x) & 511];
  constexpr int S = kSets<N>;
  static_assert(S % G == 0, "commit groups of G split a round");
  float acc[S][N / 2];
#pragma unroll
  for (int k = 0; k < S; ++k)
#pragma unroll
    for (int x = 0; x < N / 2; ++x) acc[k][x] = 0.f;
  unsigned frag[4][WIN > 0 ? WIN : 1][4];  // the window stream's four fragment sets
  asm volatile("bar.sync 1, %0;" ::"r"(w * 128));  // the active warp groups start together
  const long long t0 = clock64();
  for (int it = 0; it < iter; ++it) {
    if constexpr (WIN > 0) {
      static_assert(RS && N == 32 && S == 8, "the window stream: register A, N 32, 8 output rows");
      // This lane's ldmatrix row: 16 bytes of A; every tile row and column reads the same ones.
      const unsigned a_vg = base + static_cast<unsigned>(threadIdx.x & 31) * 16u;
      const unsigned b_vg = smem_desc_lo(base + L::a_bytes, N / 8 * 128);
      constexpr int kTR = 8 + 7 - 1;  // tile rows a pass
      static_assert((2 * kTR) % 4 == 0, "two passes bring the sets back to set 0");
      mtabench::fused::rs_window_columns<__nv_bfloat16, N / 8, 7, WIN, 0, false, W>(acc, frag, a_vg, 0u, b_vg, 0u, 0u,
                                                                                   128u >> 4);
      mtabench::fused::rs_window_columns<__nv_bfloat16, N / 8, 7, WIN, kTR % 4, false, W>(acc, frag, a_vg, 0u, b_vg, 0u,
                                                                                         0u, 128u >> 4);
    } else {
#pragma unroll
      for (int grp = 0; grp < S / G; ++grp) {
        mtabench::fused::wgmma_fence();
#pragma unroll
        for (int g = 0; g < G; ++g) {
          if constexpr (RS)
            mtabench::fused::wgmma_rs_m64k16<__nv_bfloat16, N>(acc[grp * G + g], a_r, b_desc);
          else
            mtabench::fused::wgmma_m64k16<__nv_bfloat16, N>(acc[grp * G + g], a_desc, b_desc);
        }
        mtabench::fused::wgmma_commit();
        mtabench::fused::wgmma_wait<1>();
      }
    }
  }
  mtabench::fused::wgmma_wait<0>();
  const long long t1 = clock64();
  float total = 0.f;
#pragma unroll
  for (int k = 0; k < S; ++k)
#pragma unroll
    for (int x = 0; x < N / 2; ++x) total += acc[k][x];
  sink[blockIdx.x * blockDim.x + threadIdx.x] = total;  // keeps the accumulators live
  if ((threadIdx.x & 127) == 0) {
    cycles[(blockIdx.x * 3 + wg) * 2] = t0;
    cycles[(blockIdx.x * 3 + wg) * 2 + 1] = t1;
  }
#endif
}

struct Result {
  double cycles_per_wgmma, macs_per_cycle;
};

// wgmmas a warp group issues in one round of the kernel's loop (WIN: two passes of the window
// stream).
template <int N, int G, int WIN>
constexpr int kPerRound = WIN > 0 ? 2 * WIN * 56 : kSets<N>;

template <int N, bool RS, int G, int WIN = 0, int W = 1>
Result measure(int sms, int w, int iter) {
  auto kernel = rate_kernel<N, RS, G, WIN, W>;
  const int bytes = Layout<N>::bytes;
  PROBE_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  long long* d_cycles = nullptr;
  float* d_sink = nullptr;
  PROBE_CHECK(cudaMalloc(&d_cycles, sizeof(long long) * sms * 3 * 2));
  PROBE_CHECK(cudaMalloc(&d_sink, sizeof(float) * sms * 384));
  for (int run = 0; run < 2; ++run) {  // a warm-up, then the timed launch
    kernel<<<sms, kBlockThreads<WIN>, bytes>>>(iter, w, d_cycles, d_sink);
    PROBE_CHECK(cudaGetLastError());
    PROBE_CHECK(cudaDeviceSynchronize());
  }
  std::vector<long long> c(static_cast<size_t>(sms) * 3 * 2);
  PROBE_CHECK(cudaMemcpy(c.data(), d_cycles, sizeof(long long) * c.size(), cudaMemcpyDeviceToHost));
  PROBE_CHECK(cudaFree(d_cycles));
  PROBE_CHECK(cudaFree(d_sink));
  std::vector<double> per_sm;
  for (int b = 0; b < sms; ++b) {
    long long lo = c[(b * 3) * 2], hi = c[(b * 3) * 2 + 1];
    for (int g = 1; g < w; ++g) {
      lo = std::min(lo, c[(b * 3 + g) * 2]);
      hi = std::max(hi, c[(b * 3 + g) * 2 + 1]);
    }
    per_sm.push_back(static_cast<double>(hi - lo) / (static_cast<double>(w) * iter * kPerRound<N, G, WIN>));
  }
  std::nth_element(per_sm.begin(), per_sm.begin() + sms / 2, per_sm.end());
  const double cyc = per_sm[sms / 2];
  return {cyc, 64.0 * N * 16 / cyc};
}

template <int N, bool RS, int G, int WIN = 0, int W = 1>
void row(int sms, int iter) {
  if constexpr (WIN > 0) std::printf("RS N %-3d k 7 window, %d columns a group, wait %d", N, WIN, W);
  else std::printf("%-3s N %-3d G %-2d", RS ? "RS" : "SS", N, G);
  for (int w = 1; w <= kBlockThreads<WIN> / 128; ++w) {
    const Result r = measure<N, RS, G, WIN, W>(sms, w, WIN > 0 ? std::max(1, iter / 16) : iter);
    std::printf(" | W %d: %6.2f cyc/wgmma %6.0f MAC/cyc", w, r.cycles_per_wgmma, r.macs_per_cycle);
  }
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  const int iter = argc > 1 ? std::atoi(argv[1]) : 1024;
  int dev = 0;
  cudaDeviceProp prop{};
  PROBE_CHECK(cudaGetDevice(&dev));
  PROBE_CHECK(cudaGetDeviceProperties(&prop, dev));
  if (prop.major != 9) {
    std::printf("wgmma-rate-probe: needs an sm_90 GPU (this is sm_%d%d)\n", prop.major, prop.minor);
    return 2;
  }
  std::printf("wgmma-rate-probe: %s, %d SMs; per SM (median over SMs, one block an SM, clock64 from the\n"
              "first warp group's start to the last one's end; %d rounds a warp group of one wgmma\n"
              "m64nNk16 bf16 -> fp32 into each of 8 accumulator sets (4 at N 64) in commit groups of G,\n"
              "wait_group 1 after each; the k 7 window rows: the ws consumers' rs_window_columns, %d passes of\n"
              "14 groups of 1-7 or 2-14, wait_group W):\n",
              prop.name, prop.multiProcessorCount, iter, 2 * std::max(1, iter / 16));
  const int sms = prop.multiProcessorCount;
  row<16, true, 1>(sms, iter);
  row<16, true, 4>(sms, iter);
  row<32, true, 1>(sms, iter);
  row<32, true, 2>(sms, iter);
  row<32, true, 4>(sms, iter);
  row<32, true, 8>(sms, iter);
  row<32, false, 4>(sms, iter);
  row<64, false, 4>(sms, iter);
  row<64, false, 2>(sms, iter);
  // The warp-specialised consumers' own stream (v153's question: does one warp group alone keep
  // the pipe as busy as two on it?).
  row<32, true, 1, 1>(sms, iter);
  row<32, true, 1, 2>(sms, iter);
  row<32, true, 1, 2, 2>(sms, iter);
  return 0;
}
