#pragma once
// The fused multi-token-attention kernel (device code). One launch (v82: after the statistics
// kernel of fused_prestats.cuh where the plan says p.prestats, and then with no stats items);
// each block takes work items in order (a ticket counter), so an item may wait only on earlier
// items:
//   stats item (b, band, chunk): max and sum of exp over a column chunk of the band's rows, all
//       channels; the last chunk of a band to finish merges them into the band's row statistics
//       and raises the band's ready flag.
//   conv item (b, band, tile): waits until the band and its neighbours are ready (the k x k
//       window reaches r rows up and down), builds the probability tile of its rows +- r and
//       columns +- r in shared memory (each score read again, now from L2), contracts it with
//       the weights (tensor cores for bf16/fp16, fp32 FMA for fp32), adds the bias, writes the
//       tile of y (zeros above the diagonal) with coalesced stores.
//   zero item (b, band, chunk): the band's columns beyond its last lower tile are all zeros.
// Small seq (local_stats): no stats items; a block computes the statistics of its own rows.
// All math in fp32; probabilities are rounded to the workload dtype only as tensor-core operands
// (as PyTorch rounds softmax output before its convolution).
// Parts: fused_stats.cuh (stats items), fused_tiles.cuh (probability and staging tiles),
// fused_mma.cuh (tensor cores), fused_fma.cuh (fp32); this file: block set-up, zero items, the
// item loop.

#include "impls/fused/fused_fma.cuh"
#include "impls/fused/fused_mma.cuh"
#include "impls/fused/fused_wgmma.cuh"

namespace mtabench::fused {

// ---- block set-up ------------------------------------------------------------------------------
template <class T, bool MMA, bool WG, int NTHR = kThreads>
__device__ void setup_block(const FusedParams& p, char* smem) {
  float* bias_s = reinterpret_cast<float*>(smem + p.sm_bias);
  const T* bias = static_cast<const T*>(p.bias);
  for (int o = threadIdx.x; o < (p.O + 7) / 8 * 8; o += NTHR) bias_s[o] = o < p.O ? to_f(bias[o]) : 0.f;
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  // v102: the fp32 fill's mbarrier (fused_fma.cuh), initialised before the set-up's barrier.
  if constexpr (!MMA && !WG) {
    if (threadIdx.x == 0) {
      mbar_init(&fp32_fill_bar, NTHR);
      asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
  }
#endif
  if constexpr (WG) {
    load_weight_cores<T>(p, smem);
  } else if constexpr (MMA) {
    if (p.kchunk == p.ksteps) load_weight_fragments<T, NTHR>(p, reinterpret_cast<uint2*>(smem + p.sm_w), 0, p.ksteps);
    // A-fragment word offsets in the probability tile for each k-step and t: the pair
    // (2t, 2t+1) and the pair (2t+8, 2t+9). Padding points at offset 0 (a finite value that
    // meets a zero weight).
    int* koff = reinterpret_cast<int*>(smem + p.sm_koff);
    if (p.fill4) {
      // Byte offset of each 16-byte chunk (two per k-step) from an A row's first column.
      #pragma unroll 1
      for (int e = threadIdx.x; e < p.ksteps * 2; e += NTHR) koff[e] = fill4_koff(p, e);
      return;
    }
    if (p.ldsm) {
      // Byte offset of each 8-channel chunk (two per k-step) from an m-tile row's column.
      #pragma unroll 1
      for (int e = threadIdx.x; e < p.ksteps * 2; e += NTHR) {
        const KIndex x = split_k(p, e * 8);
        koff[e] = x.pad ? 0 : ((x.u * p.PW + x.v) * p.pitch_w + x.c / 2) * 4;
      }
      return;
    }
    #pragma unroll 1
    for (int e = threadIdx.x; e < p.ksteps * 8; e += NTHR) {
      const int s = e >> 3, t = (e >> 1) & 3, h = e & 1;
      const KIndex x = split_k(p, s * 16 + 2 * t + 8 * h);
      koff[e] = x.pad ? 0 : (x.u * p.PW + x.v) * p.pitch_w + (x.c >> 1);
    }
  } else if (!p.w_global) {  // else the weights are read from global memory: no room here
    // v94: as [head group of 4][c][u][v][4 heads], so a tap's four heads are one 16-byte
    // broadcast load in conv_item_fma (v93r: four generic loads and their address arithmetic).
    float* ws = reinterpret_cast<float*>(smem + p.sm_w);
    const T* w = static_cast<const T*>(p.weight);
    const int per_o = p.C * p.K * p.K;
    for (int e = threadIdx.x; e < (p.O + 3) / 4 * 4 * per_o; e += NTHR) {
      const int g4 = e >> 2, og = g4 / per_o, o = 4 * og + (e & 3);
      ws[e] = o < p.O ? to_f(w[o * per_o + (g4 - og * per_o)]) : 0.f;
    }
  }
}

// ---- zero item --------------------------------------------------------------------------------
// Columns [c0, c1) of the band's rows, every head: a warp per row, lanes over 16-byte vectors
// (v1/v2 divided a 64-bit index per vector). NTHR: the team; STEPPED: the warp-specialised
// producer's stepped-pointer loop (v71).
template <class T, int NTHR = kThreads, bool STEPPED = false>
__device__ void zero_item(const FusedParams& p, int b, int q, int chunk, int lower) {
  if constexpr ((kAblate & kAblateZeroItems) != 0) return;
  const long long i0 = static_cast<long long>(q) * p.R;
  const long long c0 = static_cast<long long>(lower) * p.TJ + static_cast<long long>(chunk) * p.ZC;
  const int n = static_cast<int>(min(c0 + p.ZC, p.S) - c0);
  const int rows = static_cast<int>(min(static_cast<long long>(p.R), p.S - i0));
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  constexpr int per_vec = 16 / sizeof(T);
  T* y = static_cast<T*>(p.y);
  if constexpr (STEPPED) {
    // The warp-specialised kernel's producer (v71): where every row's run starts 16-byte aligned
    // and is whole vectors, one division for the warp's first (head, row), then the rows by
    // stepped pointers (the general loop below spends ~90 instructions a row on a division,
    // 64-bit index products and the alignment head, for 8 stores a lane at ZC 2048). Not in the
    // block-wide instances: there it moved the 64-register few-heads instance's spills (v66).
    if ((p.S % per_vec) == 0 && (c0 % per_vec) == 0 && (reinterpret_cast<std::uintptr_t>(y) & 15) == 0) {
      constexpr int kStep = NTHR / 32;
      const int vecs = n / per_vec;
      int o = warp / rows, rr = warp - o * rows;
      uint4* dst = reinterpret_cast<uint4*>(y + ((static_cast<long long>(b) * p.O + o) * p.S + i0 + rr) * p.S + c0);
      const long long row_vecs = p.S / per_vec;  // 16-byte vectors from one row of y to the next
      #pragma unroll 1
      while (o < p.O) {
        for (int v = lane; v < vecs; v += 32) store_stream(dst + v, make_uint4(0, 0, 0, 0));
        rr += kStep;
        dst += kStep * row_vecs;
        while (rr >= rows) {  // into the next head's plane: S - rows rows on
          rr -= rows;
          ++o;
          dst += (p.S - rows) * row_vecs;
        }
      }
      return;
    }
  }
  #pragma unroll 1
  for (int orow = warp; orow < p.O * rows; orow += NTHR / 32) {
    const int o = orow / rows, rr = orow - o * rows;
    T* dst = y + ((static_cast<long long>(b) * p.O + o) * p.S + i0 + rr) * p.S + c0;
    // Scalar head up to 16-byte alignment (rows of a seq that is not a multiple of 8), vectors,
    // scalar tail.
    const int head = min(n, static_cast<int>(((16 - (reinterpret_cast<std::uintptr_t>(dst) & 15)) & 15) / sizeof(T)));
    const int vecs = (n - head) / per_vec;
    if (lane < head) dst[lane] = from_f<T>(0.f);
    uint4* vd = reinterpret_cast<uint4*>(dst + head);
    for (int v = lane; v < vecs; v += 32) store_stream(vd + v, make_uint4(0, 0, 0, 0));
    for (int x = head + vecs * per_vec + lane; x < n; x += 32) dst[x] = from_f<T>(0.f);
  }
}

// ---- the kernel ----------------------------------------------------------------------------------
// The last block out resets the counters for the next call (graph replays included). All NTHR
// threads of the block call it. Thread 0's verdict reaches the others through the barrier's own
// reduction (__syncthreads_or), not a shared variable: in the warp-specialised kernel racecheck
// reported the shared form (write by thread 0, __syncthreads, read) as a hazard with thread 256,
// while synccheck found no barrier misuse; JOURNAL.md v41, "racecheck".
template <int NTHR>
__device__ __forceinline__ void reset_if_last(const FusedParams& p) {
  bool last = false;
  if (threadIdx.x == 0) {
    __threadfence();
    last = atomicAdd(p.done, 1u) == gridDim.x - 1;
  }
  if (__syncthreads_or(last)) {
    for (int e = threadIdx.x; e < p.B * p.Q; e += NTHR) {
      p.band_count[e] = 0u;
      p.band_ready[e] = 0u;
    }
    if (threadIdx.x == 0) {
      *p.ticket = 0u;
      *p.done = 0u;
    }
    __threadfence();
  }
}

// NTHR: the block's threads (kBlockThreads below).
template <class T, bool MMA, int NT, int KT, int NARROW, bool WG, int NTHR>
__device__ void run_item(const FusedParams& p, char* smem, int4 it) {
  switch (it.x) {
    case kStatsItem: {
      // Number of chunks of this band: columns up to its last row.
      const long long last = min(static_cast<long long>(it.z + 1) * p.R, p.S);
      // Vectors per lane (all in flight at once): 8 (32 registers) where registers allow; 4 in
      // the 64-register few-heads instance and for fp32 (8 registers per vector).
      constexpr int NV = (MMA && NT == 1) || !MMA ? 4 : 8;
      stats_item<T, NV, NTHR>(p, it.y, it.z, it.w, static_cast<int>((last + p.CS - 1) / p.CS));
      break;
    }
    case kConvItem:
      // The ldmatrix path with its wide tile (8 * ldsm_mtiles(NT) columns) or, NARROW 1, 16, or,
      // NARROW 2 (kLdsmHalf), half the wide tile at two blocks an SM, or, 3 (kLdsmTwoPass), the
      // wide tile at two blocks an SM in two passes.
      if constexpr (WG && KT > 0) conv_item_wgmma_rs<T, NT, KT>(p, smem, it.y, it.z, it.w);  // A from registers
      else if constexpr (WG) conv_item_wgmma<T, NT>(p, smem, it.y, it.z, it.w);
      else if constexpr (MMA && NT > 1) conv_item_ldsm<T, NT, LdsmInstanceMtiles<NT, NARROW>::value, LdsmPasses<NARROW>::value>(p, smem, it.y, it.z, it.w);
      else if constexpr (MMA) conv_item_mma<T, NTHR>(p, smem, it.y, it.z, it.w);  // 1-4 heads out
      else conv_item_fma<KT>(p, smem, it.y, it.z, it.w);
      break;
    default: {
      // v83: a barrier, as the other items have, between the last thread's write of next_taken
      // (the item loop) and the other threads' speculative reads of it after the item.
      __syncthreads();
      const long long last = min(static_cast<long long>(it.z + 1) * p.R, p.S);
      zero_item<T, NTHR>(p, it.y, it.z, it.w, static_cast<int>((last + p.TJ - 1) / p.TJ));
      break;
    }
  }
}

// Four blocks per SM (32 warps, 64 registers) for the few-heads tensor-core instance: after v5's
// stats items its warps stalled mostly at barriers and on loads, and a fourth block hid 9-10% of
// the time at seq 2048-8192 (though 5-7% slower at seq 512-1024, where there are fewer items;
// JOURNAL.md v5) despite 188 bytes of spill loads; three (80 registers) since v2. Three for the
// fp32 FMA instances (v6b, 80 registers, 200-460 bytes of spills; two, 128 registers, until v5).
// Two for the wgmma instance with up to 16 heads out (v13d: at 148 registers, one block per SM,
// k 5 heads 16 was 24% slower than v12's 128 registers and two blocks).
// v72: eight blocks of 128 threads (still 64 registers) for the few-heads instance.
// v127: two for the ldmatrix path's half tile (NARROW kLdsmHalf: 128 registers; one block of 8
// warps an SM at 226 left k 5 heads 8/12 at seq 777 latency-bound at ~1 instruction a cycle).
template <bool MMA, int NT, bool WG, int NARROW = 0>
constexpr int min_blocks() {
  return MMA && NT == 1 && !WG ? 8 : !MMA ? 3 : WG && NT <= 2 ? 2 : NARROW == kLdsmHalf || NARROW == kLdsmTwoPass ? 2 : 1;
}
// Threads a block: kFewThreads for the few-heads tensor-core instance (the plan launches it with
// p.threads = kFewThreads and R = kFewRows), kThreads for the others.
template <bool MMA, int NT, bool WG>
constexpr int kBlockThreads = MMA && NT == 1 && !WG ? kFewThreads : kThreads;

// NARROW: the ldmatrix path's 16-column tile (1, the plan's fallback when the wide one does not
// fit in shared memory) or its half tile at two blocks an SM (kLdsmHalf): instances of their
// own, so the wide instances' code does not change.
// WG: the wgmma contraction (fused_wgmma.cuh), likewise an instance of its own; with KT > 0 (5 or
// 7) the one with A from registers.
template <class T, bool MMA, int NT, int KT, int NARROW = 0, bool WG = false>
__global__ void __launch_bounds__(kBlockThreads<MMA, NT, WG>, min_blocks<MMA, NT, WG, NARROW>())
    fused_kernel(const FusedParams p) {
  constexpr int NTHR = kBlockThreads<MMA, NT, WG>;
  extern __shared__ __align__(16) char smem[];
#if MTABENCH_FUSED_TIMELINE
  if (threadIdx.x == 0) tl_row = nullptr;
#endif
  timeline_block_mark(p, kTlEntry);
  // v77: this block's line of the item list into L2 before the set-up, so that the first
  // ticket's item (a ticket near blockIdx.x: the blocks take their first ones in about launch
  // order) is read from L2 after the atomic, not from DRAM (the timing flushes L2). The item
  // timeline (tools/gpu-timeline.sh) put the first item's start 3.7-5.4 us after the blocks'
  // entry: set-up loads, atomic, item load in series. Taking the ticket beside the set-up, or
  // holding it in a register across it, moved the 64-register instance's spills (JOURNAL.md v77).
  if (threadIdx.x == 0 && !p.local_stats) asm volatile("prefetch.global.L2 [%0];" ::"l"(p.items + min(blockIdx.x, p.n_items - 1u)));
  setup_block<T, MMA, WG, NTHR>(p, smem);
#if __CUDA_ARCH__ >= 900
  // v82: launched behind the statistics kernel (fused_prestats.cuh) with programmatic stream
  // serialization, this block may have started before that grid finished: wait for it (and
  // its stores) here, after the set-up, which reads only the weights and the bias.
  if (p.prestats) asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  timeline_block_mark(p, kTlSetup);
  __syncthreads();
  timeline_block_mark(p, kTlSetupBarrier);
  if (p.local_stats) {  // no dependencies between items: one item per block
    run_item<T, MMA, NT, KT, NARROW, WG, NTHR>(p, smem, p.items[blockIdx.x]);
    return;
  }
  // The next item, taken during this one so its two round trips (the ticket, then the item)
  // hide behind it. Tickets are taken in order and an item only waits on smaller tickets, whose
  // holders are running: no deadlock. The last thread takes them (v10): thread 0's warp polls
  // ready flags at an item's start, and the ticket's round trip delayed its polls (v7).
  // v83: only below p.early_tickets (the plan's: while more than a grid of items follow this
  // one). In the last wave a ticket taken ahead waits for this item to end while other blocks
  // run dry: the item timeline (seq 512) had blocks that finished their set-up first holding
  // two items, the second starting ~5 us late, and others none. There the next ticket is taken
  // when this item ends, by whichever block is free first.
  __shared__ int4 next_item;  // x < 0: no items left
  __shared__ unsigned next_ticket;  // next_item's ticket
  __shared__ int next_taken;        // the last thread took the next ticket during this item
  // p.early_tickets, copied to shared memory once and read from there at each item: compared
  // with the parameter directly, the few-heads instance spilled 92/144 bytes (v83: 40/40; this
  // way 44/52, main's v82 48/56).
  __shared__ unsigned early_tickets;
  const auto take_next = [&p] {
    const unsigned t = atomicAdd(p.ticket, 1u);
    next_item = t < static_cast<unsigned>(p.n_items) ? p.items[t] : make_int4(-1, 0, 0, 0);
    next_ticket = t;
  };
  if (threadIdx.x == NTHR - 1) {
    early_tickets = static_cast<unsigned>(p.early_tickets);
    take_next();
  }
  __syncthreads();
  for (;;) {
    const int4 cur = next_item;
#if MTABENCH_FUSED_TIMELINE
    if (threadIdx.x == 0 && p.timeline && cur.x >= 0) {
      tl_row = p.timeline + static_cast<long long>(kTimelineWords) * next_ticket;
      tl_row[kTlWhere] = timeline_where();
      tl_row[kTlStart] = globaltimer_ns();
    }
#endif
    __syncthreads();
    if (cur.x < 0) break;
    if (threadIdx.x == NTHR - 1) {
      next_taken = next_ticket < early_tickets;
      if (next_taken) take_next();
    }
    run_item<T, MMA, NT, KT, NARROW, WG, NTHR>(p, smem, cur);
    if (threadIdx.x == NTHR - 1 && !next_taken) take_next();
    __syncthreads();
    timeline_mark(kTlEnd);
  }
  timeline_block_mark(p, kTlExit);
  reset_if_last<NTHR>(p);
}

}  // namespace mtabench::fused
