#pragma once
// What every part of the fused work-queue kernel shares: the block shape and eight-score
// vector loads.
#include "harness/device_dtype.cuh"
#include "impls/fused/fused_contraction.h"
#include "impls/fused/fused_math.cuh"
#include "impls/fused/fused_params.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

namespace mtabench::fused {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

// A team: NTHR threads from thread FIRST. The whole block (NTHR = kThreads, FIRST = 0) or, in
// the warp-specialised kernel (fused_ws.cuh), its producer (threads 0-255 since v151), each on
// a named barrier of its own while the consumers go on.
// (So a team of kThreads from thread 0 is the block: v151's 512-thread kernel, whose producer
// is such a team, names its barrier instead: bar_sync, kWsProducerBarrier.)
// The few-heads kernel's whole block (kFewThreads from thread 0) takes named barrier 1 with all
// of its threads: the same barrier as __syncthreads, by another id.
template <int NTHR, int FIRST>
constexpr int kTeamBarrier = NTHR == kThreads && FIRST == 0 ? 0 : FIRST == 0 ? 1 : 2;
// Named barrier BAR for NTHR threads (0: __syncthreads).
template <int BAR, int NTHR>
__device__ __forceinline__ void bar_sync() {
  if constexpr (BAR == 0) __syncthreads();
  else asm volatile("bar.sync %0, %1;\n" ::"n"(BAR), "n"(NTHR) : "memory");
}
// The team's barrier.
template <int NTHR, int FIRST = 0>
__device__ __forceinline__ void team_sync() {
  bar_sync<kTeamBarrier<NTHR, FIRST>, NTHR>();
}
// The team's barrier, returning whether any of its threads passed true (the barrier's own
// reduction: no shared variable written by one thread and read by the others after it).
template <int NTHR, int FIRST = 0>
__device__ __forceinline__ bool team_any(bool mine) {
  if constexpr (kTeamBarrier<NTHR, FIRST> == 0) {
    return __syncthreads_or(mine) != 0;
  } else {
    unsigned any;
    asm volatile("{\n.reg .pred q, r;\nsetp.ne.u32 q, %1, 0;\nbar.red.or.pred r, %2, %3, q;\nselp.u32 %0, 1, 0, r;\n}\n"
                 : "=r"(any)
                 : "r"(static_cast<unsigned>(mine)), "n"(kTeamBarrier<NTHR, FIRST>), "n"(NTHR)
                 : "memory");
    return any != 0;
  }
}

// Phase ablation, for tools/gpu-ablate.sh only (never set in a normal build: 0 skips nothing): a
// bit mask of phases the kernel leaves out, so that Nsight Compute can time what is left and each
// phase's share of the time is measured rather than inferred (JOURNAL.md v19). The output is then
// wrong and the gate fails; only the kernel's duration is read. The bits act on the few-heads
// paths (the four-channel fill and mma.sync, and fp32's FMA path), the stats and zero items; the
// tile-store bit also in the warp-specialised kernel, where it leaves out its whole epilogue
// (the staging by stmatrix and the stores).
#ifndef MTABENCH_FUSED_ABLATE
#define MTABENCH_FUSED_ABLATE 0
#endif
constexpr int kAblate = MTABENCH_FUSED_ABLATE;
constexpr int kAblateFillLoads = 1;    // the conv items' score loads (the fill's math stays, v22)
constexpr int kAblateContraction = 2;  // the mma.sync k-loop of the four-channel path
constexpr int kAblateTileStores = 4;   // the conv items' y stores
constexpr int kAblateZeroItems = 8;    // the zero items' y stores
constexpr int kAblateStatsLoads = 16;  // the stats items' loads and folds (their merge stays)
// Forty-fifth session: bit 1 also takes fill8's math away (its n is then 0 at compile time, so
// every output is a constant zero and ptxas drops the math), so fill8's two halves have bits of
// their own: 32 its score loads only (the raw words made from the task's indices instead, so the
// math still runs on values ptxas cannot know), 64 its math only (the raw words stored as loaded).
constexpr int kAblateFill8LoadsOnly = 32;
constexpr int kAblateFill8MathOnly = 64;
// 128: fill8's score loads kept as instructions (same count, width and columns) but all from rows
// 0 and 1 of batch 0's first 8 channel planes, which stay in L1: what the loads cost as LSU work,
// without their latency to L2 or DRAM (math kept; the outputs are wrong).
constexpr int kAblateFill8LoadsNear = 128;
// 256 (forty-seventh session): fill8's stores without the rotation's selects, store y of lane l
// (task & 7) at column y ^ l: on the wgmma tile (16-byte columns, 128-byte aligned vectors) the
// same bank spread, 96 SELs a task fewer, every column but lane 0's misplaced. What a swizzled
// tile layout (the consumers' ldmatrix addresses applying the XOR) could give the producer at
// most (the outputs are wrong). Measured +0.6% at k 7 heads 32: the selects cost nothing.
constexpr int kAblateFill8Unrotated = 256;
// 512 and 1024 (fifty-first session): the ws consumers' y rows (store_ws_lines) keep their
// stmatrix staging and both barriers a row, but 512 drops the read-back (LDS) and the global
// stores (STG), 1024 the global stores only (the read-back's values kept live). The outputs are
// wrong. They split bit 4's ~7% (the whole epilogue, the fifty-first session's timeline): 512
// measured -5.7% at k 7 heads 32 (Nsight Compute), so the staging and its barriers are ~1.3%;
// 1024, not yet run, tells the read-back from the bytes leaving the SM. v155 (the rows by TMA
// tensor stores from the same staging, candidates/) measured "same": the threads' LDS and STG
// instructions themselves are not the cost (JOURNAL.md).
constexpr int kAblateWsRowReadStore = 512;
constexpr int kAblateWsRowStore = 1024;

// The warp-specialised producer's fill8 store rotation (fill8_rot), for an experiment only (the
// forty-sixth session's plan, JOURNAL.md "Ready for the next session"): which of its three
// stages of selects run (bit 0: rotate by 1, bit 1: by 2, bit 2: by 4; 32 SELs a task each).
// 7, the default, is the normal kernel; 6 leaves a quarter-warp's stores 2-way bank-conflicted,
// 4 4-way, 0 8-way, for 32, 64 or 96 fewer producer instructions a task. Every other kernel
// keeps all three stages. Measured in the forty-seventh session: 6 +0.8%, 4 +7.6%, 0 +16.6% at
// k 7 heads 32 (JOURNAL.md "v147-v148": the conflicts cost, the selects do not); kept as
// gpu-variants.sh's example knob.
#ifndef MTABENCH_WS_FILL_ROT_MASK
#define MTABENCH_WS_FILL_ROT_MASK 7
#endif
constexpr int kWsFillRotMask = MTABENCH_WS_FILL_ROT_MASK;
static_assert(kWsFillRotMask >= 0 && kWsFillRotMask <= 7, "MTABENCH_WS_FILL_ROT_MASK is three bits");

// The register-A contraction's commit groups left in flight after each wait (rs_window_columns'
// W), for an experiment (the forty-ninth session's plan, JOURNAL.md "Ready for the next
// session"): MTABENCH_WS_WAIT in the warp-specialised consumers (k 7 heads 32), MTABENCH_RS_WAIT
// in the block-wide register-A kernel (k 5 heads 16). 1, the default, is the kernel before the
// knob (its cubins byte-identical); 2 keeps three groups in flight behind one tile row loaded
// ahead, in the same four fragment sets (no more registers).
#ifndef MTABENCH_WS_WAIT
#define MTABENCH_WS_WAIT 1
#endif
#ifndef MTABENCH_RS_WAIT
#define MTABENCH_RS_WAIT 1
#endif
constexpr int kWsWait = MTABENCH_WS_WAIT, kRsWait = MTABENCH_RS_WAIT;
static_assert(kWsWait >= 1 && kWsWait <= 2 && kRsWait >= 1 && kRsWait <= 2,
              "MTABENCH_WS_WAIT and MTABENCH_RS_WAIT: 1 or 2 (four fragment sets)");

// Item timeline, for tools/gpu-timeline.sh only (never set in a normal build: 0 compiles to the
// normal kernel): thread 0 of each block of the ticket-loop kernel stamps %globaltimer into
// p.timeline at each item's start and end, and, in the few-heads conv item, after its
// statistics, its fill and its contraction; also each block's entry, set-up and exit. The
// warp-specialised kernel stamps its producer's and its consumers' steps apart
// (timeline_ticket_mark; the slots in fused_params.h).
// (The switch and the row layout are in fused_params.h, which the host code shares.)
__device__ __forceinline__ unsigned long long globaltimer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
#if MTABENCH_FUSED_TIMELINE
__shared__ unsigned long long* tl_row;  // the block's current item's row of p.timeline (thread 0's)
#endif
// Thread 0 stamps word `w` of this block's words (TimelineBlockWord: entry, set-up done, the
// set-up's barrier passed, exit), after the tickets' rows.
__device__ __forceinline__ void timeline_block_mark(const FusedParams& p, int w) {
#if MTABENCH_FUSED_TIMELINE
  if (threadIdx.x == 0 && p.timeline)
    p.timeline[static_cast<long long>(kTimelineWords) * p.n_items + kTimelineBlockWords * blockIdx.x + w] = globaltimer_ns();
#else
  (void)p;
  (void)w;
#endif
}
// Thread 0 stamps slot `slot` of the current item's row (called where thread 0 has passed a
// barrier, so the stamp is when the whole block got there).
__device__ __forceinline__ void timeline_mark(int slot) {
#if MTABENCH_FUSED_TIMELINE
  if (threadIdx.x == 0 && tl_row) tl_row[slot] = globaltimer_ns();
#else
  (void)slot;
#endif
}

// A ticket row's kTlWhere word: this block's SM and index.
__device__ __forceinline__ unsigned long long timeline_where() {
  unsigned sm;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  return static_cast<unsigned long long>(sm) << 32 | blockIdx.x;
}
// The calling thread stamps slot `slot` of ticket `ticket`'s row with the time, or kTlWhere with
// timeline_where() (the warp-specialised kernel, whose two teams stamp the same item at different
// times).
__device__ __forceinline__ void timeline_ticket_mark(const FusedParams& p, unsigned ticket, int slot) {
#if MTABENCH_FUSED_TIMELINE
  if (p.timeline)
    p.timeline[static_cast<long long>(kTimelineWords) * ticket + slot] = slot == kTlWhere ? timeline_where() : globaltimer_ns();
#else
  (void)p;
  (void)ticket;
  (void)slot;
#endif
}

// Eight scores as raw bits (one 16-byte vector for 16-bit types, two for fp32), columns at or
// past c1 excluded later.
template <class T>
struct Vec8 {
  uint4 w[sizeof(T) == 4 ? 2 : 1];
};
template <class T>
__device__ __forceinline__ Vec8<T> load_vec8(const T* src, long long e, long long c1) {
  Vec8<T> v;
  constexpr int words = sizeof(Vec8<T>) / 16;
  if (e + 8 <= c1 && (reinterpret_cast<std::uintptr_t>(src) & 15) == 0) {
#pragma unroll
    for (int x = 0; x < words; ++x) v.w[x] = reinterpret_cast<const uint4*>(src)[x];
  } else {
    T* h = reinterpret_cast<T*>(&v);
#pragma unroll
    for (int q = 0; q < 8; ++q) h[q] = e + q < c1 ? src[q] : T(0.f);
  }
  return v;
}

// y is written once and never read back: 16-byte streaming stores (st.global.cs: evict-first in
// L2). v11 meant them to keep the scores in L2 for the tile items' re-reads (292 MB read from
// DRAM for a 134 MB triangle at seq 4096); they did not (DRAM reads −1%), but fp32, whose y is
// twice the bytes, got 4-5% faster (JOURNAL.md v11).
template <class V>
__device__ __forceinline__ void store_stream(void* dst, const V& v) {
  __stcs(reinterpret_cast<V*>(dst), v);
}

// Two 16-bit values of a 32-bit word to and from floats (bf16: shifts and masks, no PRMT).
template <class T>
__device__ __forceinline__ unsigned pack2(float lo, float hi) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<const unsigned*>(&v);
  } else {
    const __half2 v = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<const unsigned*>(&v);
  }
}
template <class T>
__device__ __forceinline__ float2 unpack2(unsigned w) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return make_float2(__uint_as_float(w << 16), __uint_as_float(w & 0xffff0000u));
  } else {
    return __half22float2(*reinterpret_cast<const __half2*>(&w));
  }
}

// ---- mbarriers (sm_90a; the warp-specialised kernel's pipeline, v41, and the fp32 fill's bulk
// copies, v102) ------------------------------------------------------------------------------------
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
__device__ __forceinline__ unsigned smem_u32(const void* ptr) {
  return static_cast<unsigned>(__cvta_generic_to_shared(ptr));
}
__device__ __forceinline__ void mbar_init(unsigned long long* bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(count) : "memory");
}
// Arrival with release semantics: this thread's earlier shared-memory accesses are visible to
// (or, for reads, done before) the waiters of the phase it completes.
__device__ __forceinline__ void mbar_arrive(unsigned long long* bar) {
  asm volatile("{\n.reg .b64 st;\nmbarrier.arrive.shared::cta.b64 st, [%0];\n}\n" ::"r"(smem_u32(bar)) : "memory");
}
// Until a phase has completed (acquire): PARITY, the phase of parity `arg`; else the phase that
// `arg`, an arrival's token, names (v102). try_wait suspends the thread until the phase completes
// or the hint's time (10 ms, as CUTLASS's barrier wait) runs out, instead of the system's short
// default: v41's consumers went round this loop ~45 times a wait (3.0 M executions at k 7 heads
// 32), issue slots the producer's warps on the same schedulers could use.
template <bool PARITY>
__device__ __forceinline__ void mbar_wait_phase(unsigned long long* bar, unsigned long long arg) {
  constexpr unsigned kSuspendNs = 10000000u;
  const unsigned at = smem_u32(bar);
  unsigned done = 0;
  while (!done) {
    if constexpr (PARITY)
      asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2, %3;\nselp.u32 %0, 1, 0, p;\n}\n"
                   : "=r"(done)
                   : "r"(at), "r"(static_cast<unsigned>(arg)), "r"(kSuspendNs)
                   : "memory");
    else
      asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.shared::cta.b64 p, [%1], %2, %3;\nselp.u32 %0, 1, 0, p;\n}\n"
                   : "=r"(done)
                   : "r"(at), "l"(arg), "r"(kSuspendNs)
                   : "memory");
  }
}
__device__ __forceinline__ void mbar_wait(unsigned long long* bar, unsigned parity) { mbar_wait_phase<true>(bar, parity); }
// `bytes` (a multiple of 16, both addresses 16-byte aligned) from global to shared memory by the
// TMA unit, completing as transactions on mbarrier `bar` (whose expected count the caller raised).
__device__ __forceinline__ void bulk_copy_to_shared(unsigned dst, const void* src, unsigned bytes, unsigned bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst),
               "l"(src), "r"(bytes), "r"(bar)
               : "memory");
}
__device__ __forceinline__ void mbar_wait_token(unsigned long long* bar, unsigned long long state) {
  mbar_wait_phase<false>(bar, state);
}
#endif

}  // namespace mtabench::fused
