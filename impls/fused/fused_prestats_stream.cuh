#pragma once
// v138: the statistics kernel for long rows (PrestatsFold::stream: rows past the lean folds'
// 1024 columns, 16-bit scores, seq a multiple of 8, an aligned base; the warp-specialised
// kernel's statistics since v132). v132's wide fold (a warp a row, 8 vectors a lane, 4 blocks an
// SM) read k 7 heads 32's 537 MB triangle at 2.4 TB/s (222 us, Nsight Compute), where the copy
// rate is ~4.2 TB/s: a warp's loads and its fold took turns, and each block waited for its
// longest row. Here one block an SM stays for the whole grid (140 us, v139): each of its warps
// streams rows of its own through a ring of kStreamStages chunks of its shared memory, filled by
// bulk copies (cp.async.bulk, the TMA unit) issued by its lane 0 as soon as a chunk is folded,
// so the next chunks' bytes are in flight while it folds one. Warps take pairs of rows (S - 1 - k,
// k) of one (batch, channel): every pair is S + 1 columns, so the warps' shares are equal to a pair.
// A lane keeps its own running (max, sum) in the log2 domain across a row's chunks (one EX2 a
// chunk to rescale); the warp combines them once a row. Results as the other folds: (max, 1 / sum).
#include "impls/fused/fused_prestats.cuh"

namespace mtabench::fused {

// v139 (k 7 heads 32, Nsight Compute duration, H200): 32 warps, 3 stages of 1024 columns 140 us
// (DRAM 81% of peak, XU 65%); 24 warps, 4 of 1024 146 us; 16 warps, 3 of 2048 171 us (v138); 32
// warps, 4 of 768 150 us. Its warps are what hide the fold's latency; 32 is the most at 64 registers.
constexpr int kStreamWarps = 32;
constexpr int kStreamStages = 3;
constexpr int kStreamChunk = 1024;  // columns a chunk
constexpr int kStreamNV = kStreamChunk / 256;  // vectors of eight 16-bit scores a lane, a chunk
static_assert((kStreamNV & (kStreamNV - 1)) == 0, "the lane's max tree halves 4 kStreamNV pairs a step");
constexpr int kStreamThreads = kStreamWarps * 32;
constexpr int kStreamChunkBytes = kStreamChunk * 2;
constexpr int kStreamSmem = kStreamWarps * kStreamStages * kStreamChunkBytes;  // 192 KB

// Where a warp is in its rows: pair `pair` of rows (S - 1 - k, k) of (batch, channel) bc, k =
// pair mod S / 2; side 0 the long row, 1 the short one; chunk of kStreamChunk columns. The row's
// fields are derived once a row (set_row), not once a chunk.
struct StreamCursor {
  unsigned pair;
  int side, chunk;
  unsigned bc, i;  // the row: (batch, channel) and row index
  int nch;         // chunks of the row: columns [0, i]
};

__device__ __forceinline__ void stream_set_row(StreamCursor& c, unsigned S) {
  const unsigned half = S / 2;
  c.bc = c.pair / half;
  const unsigned k = c.pair - c.bc * half;
  c.i = c.side == 0 ? S - 1 - k : k;
  c.nch = static_cast<int>(c.i / kStreamChunk) + 1;
}
__device__ __forceinline__ void stream_advance(StreamCursor& c, unsigned S, unsigned stride) {
  if (++c.chunk < c.nch) return;
  c.chunk = 0;
  c.side ^= 1;
  if (c.side == 0) c.pair += stride;
  stream_set_row(c, S);
}

template <class T>
__global__ void __launch_bounds__(kStreamThreads, 1) fused_prestats_stream_kernel(const FusedParams p) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  static_assert(sizeof(T) == 2, "16-bit scores only");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  extern __shared__ __align__(128) char smem[];
  __shared__ unsigned long long full[kStreamWarps][kStreamStages];
#if MTABENCH_FUSED_TIMELINE
  if (threadIdx.x == 0 && p.timeline_prestats) p.timeline_prestats[2 * blockIdx.x] = globaltimer_ns();
#endif
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  if (blockIdx.x == 0)
    for (int e = threadIdx.x; e < p.B * p.Q; e += kStreamThreads) p.band_ready[e] = 1u;
  if (lane == 0) {
    for (int s = 0; s < kStreamStages; ++s) mbar_init(&full[warp][s], 1);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncwarp();
  const unsigned S = static_cast<unsigned>(p.S);
  const unsigned npairs = static_cast<unsigned>(p.B) * p.C * (S / 2);
  const unsigned stride = gridDim.x * kStreamWarps;
  const T* scores = static_cast<const T*>(p.scores);
  char* ring = smem + warp * kStreamStages * kStreamChunkBytes;
  // Lane 0 copies chunk `c` of the producer's cursor into stage s: whole 16-byte lines up to the
  // row's last one (inside the row's storage: S is a multiple of 8), the bytes counted on the
  // stage's mbarrier. Before the copy, the fence orders this warp's reads of the stage's previous
  // chunk (done: the fold used every value before the __syncwarp) before the async proxy's writes.
  const auto issue = [&](const StreamCursor& c, int s) {
    if (lane != 0) return;
    const unsigned c0 = static_cast<unsigned>(c.chunk) * kStreamChunk;
    const unsigned n = min(static_cast<unsigned>(kStreamChunk), c.i + 1 - c0);
    const unsigned bytes = ((n + 7) & ~7u) * 2;
    const T* src = scores + (static_cast<unsigned long long>(c.bc) * S + c.i) * S + c0;
    const unsigned bar = smem_u32(&full[warp][s]);
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
    bulk_copy_to_shared(smem_u32(ring + s * kStreamChunkBytes), src, bytes, bar);
  };
  StreamCursor cons{blockIdx.x * kStreamWarps + warp, 0, 0, 0, 0, 0};
  stream_set_row(cons, S);  // (a warp with no pair: its loops below do not run)
  StreamCursor prod = cons;
#pragma unroll 1
  for (int s = 0; s < kStreamStages && prod.pair < npairs; ++s) {
    issue(prod, s);
    stream_advance(prod, S, stride);
  }
  float m = -INFINITY, l = 0.f;  // this lane's running max and sum, log2 domain
  using T2 = std::conditional_t<std::is_same_v<T, __half>, __half2, __nv_bfloat162>;
#pragma unroll 1
  for (unsigned t = 0; cons.pair < npairs; ++t) {
    const int s = static_cast<int>(t % kStreamStages);
    mbar_wait(&full[warp][s], (t / kStreamStages) & 1u);
    // The chunk's columns: the row's columns from its start, at most a chunk.
    const unsigned left = cons.i + 1 - static_cast<unsigned>(cons.chunk) * kStreamChunk;
    const int n = static_cast<int>(min(static_cast<unsigned>(kStreamChunk), left));
    const uint4* buf = reinterpret_cast<const uint4*>(ring + s * kStreamChunkBytes);
    Vec8<T> v[kStreamNV];
#pragma unroll
    for (int k = 0; k < kStreamNV; ++k) v[k].w[0] = buf[lane + 32 * k];
    // The row's last chunk: columns past its end (stale bytes of the stage) as -inf.
    if (n < kStreamChunk)
#pragma unroll
      for (int k = 0; k < kStreamNV; ++k) mask_tail(v[k], n - 8 * (lane + 32 * k));
    const int live = (n + 255) >> 8;  // vectors some lane's columns reach
    // The lane's max as a tree of packed maxima (a chain of 4 NV - 1 would be that many latencies).
    T2 mt[4 * kStreamNV];
#pragma unroll
    for (int x = 0; x < 4 * kStreamNV; ++x) mt[x] = reinterpret_cast<const T2*>(&v[x / 4])[x % 4];
#pragma unroll
    for (int w = 2 * kStreamNV; w >= 1; w >>= 1)
#pragma unroll
      for (int x = 0; x < 2 * kStreamNV; ++x)
        if (x < w) mt[x] = __hmax2(mt[x], mt[x + w]);
    const T2 mx = mt[0];
    const float mc = fmaxf(to_f(mx.x), to_f(mx.y));
    const float mn = fmaxf(m, mc == -INFINITY ? -INFINITY : mc * kLog2e);
    const float base = mn == -INFINITY ? 0.f : mn;
    float ls[4] = {l * ex2(m - base), 0.f, 0.f, 0.f};
    add_ex2_vecs<T, kStreamNV>(v, live, base, ls);
    l = (ls[0] + ls[1]) + (ls[2] + ls[3]);
    m = mn;
    __syncwarp();
    if (prod.pair < npairs) {
      issue(prod, s);
      stream_advance(prod, S, stride);
    }
    if (cons.chunk == cons.nch - 1) {
      // The row's (max, sum) over the warp: the max first, then each lane's sum rescaled once.
      float mw = m;
#pragma unroll
      for (int o = 16; o; o >>= 1) mw = fmaxf(mw, __shfl_xor_sync(0xffffffffu, mw, o));
      float lw = l * ex2(m - mw);  // column 0 is in every row: mw is finite
#pragma unroll
      for (int o = 16; o; o >>= 1) lw += __shfl_xor_sync(0xffffffffu, lw, o);
      if (lane == 0)
        p.stats[stats_index(p, static_cast<int>(cons.bc / p.C), cons.i, static_cast<int>(cons.bc % p.C))] =
            make_float2(mw, 1.f / lw);
      m = -INFINITY;
      l = 0.f;
    }
    stream_advance(cons, S, stride);
  }
#if MTABENCH_FUSED_TIMELINE
  __syncthreads();
  if (threadIdx.x == 0 && p.timeline_prestats) p.timeline_prestats[2 * blockIdx.x + 1] = globaltimer_ns();
#endif
#else
  __trap();  // planned only where the warp-specialised kernel runs (sm_90a)
#endif
}

}  // namespace mtabench::fused
