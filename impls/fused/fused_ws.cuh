#pragma once
// v41: the warp-specialised register-A kernel (JOURNAL.md, "Next for many heads"). v35 showed
// that fill work folded into the contracting warps does not overlap their wgmmas (all eight warps
// run each pass in step), so here other warps do it. 512 threads (v41-v150: 384, the producer one
// warp group): warp groups 0 and 1 are the producer (tickets, zero items, and each conv item's
// statistics and fill), warp groups 2 and 3 the consumers (the contraction of 8 output rows
// each, then y's stores, since v45 through a
// staging space after the tile, since v154 a row of the group's at a time (store_ws_lines);
// v42-v139 also the stats items, handed
// over by the producer in ticket order: since v139 the statistics kernel runs ahead instead).
// The pipeline's buffers are the probability tile's chunk pairs (16 channels, 2 cstride bytes
// each; the tile is chunk-major): the producer fills pair gp of item n + 1 while
// the consumers contract a later pair of item n. Per pair an mbarrier `full` (the producer's 256
// threads arrive once the pair is written) and `empty` (the consumers' 256 arrive once their
// ldmatrix reads of it are done). The contraction reads the tile by ldmatrix (the generic proxy)
// and the weights, written once, through the async proxy. Items are taken in ticket order by the
// producer alone, and it waits only on its own consumers, who wait only on it: no deadlock.
#include "impls/fused/fused_kernel.cuh"

namespace mtabench::fused {

// v151: the producer as two warp groups (v41-v150: one, 384 threads), to hide more of its
// fill's latency (long scoreboard and waits were 55% of its stalls); the consumers are warp
// groups 2 and 3.
constexpr int kWsThreads = 512, kProducerThreads = 256;
constexpr int kProducerGroups = kProducerThreads / 128;
// The producer team's barrier: named barrier 1 (kTeamBarrier<256, 0> would be __syncthreads,
// which waits for all 512 threads). The consumers' warp groups take their own (v154's y rows).
constexpr int kWsProducerBarrier = 1;
// The consumer groups' row barriers (store_ws_lines, 128 threads each): group g takes
// kWsConsumerBarrier0 + g.
constexpr int kWsConsumerBarrier0 = 2;
__device__ __forceinline__ void producer_sync() { bar_sync<kWsProducerBarrier, kProducerThreads>(); }
constexpr int kWsMaxPairs = 4;  // chunk pairs the kernel pipelines (heads_in <= 64)
// Registers after setmaxnreg: 512 x 128 at launch = 256 x 64 (producer) + 256 x 192 (v41-v150:
// 384 x 168 = 128 x 104 + 256 x 200). At 64 the producer's fill takes one task a round.
constexpr int kProducerRegs = 64, kConsumerRegs = 192;
// setmaxnreg.inc waits until the registers are free in the block's pool, which holds what the
// launch gave (65536 / 512 rounded down to 8: 128 a thread; at 384 threads 168): asking for more
// hangs the consumers (v116's 96/208 at 384 threads did, thirty-sixth session).
static_assert(kProducerThreads * kProducerRegs + (kWsThreads - kProducerThreads) * kConsumerRegs <=
                  kWsThreads * (65536 / kWsThreads / 8 * 8),
              "the teams' registers after setmaxnreg must fit in what the launch allocated");
// Window columns a commit group in the consumers' contraction (rs_window_row; v114: 2 took k 7
// heads 32 -3.3%; 3 at four fragment sets makes ptxas serialize the wgmmas for want of
// registers), and the fragment sets. v117: three sets (one tile row loaded ahead) fit 3 columns
// without serializing, but measured +1.2% at k 7 heads 32, and 2 columns at three sets +0.9%.
constexpr int kWsColumns = 2, kWsSets = 4;

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
template <int N>
__device__ __forceinline__ void regs_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}
template <int N>
__device__ __forceinline__ void regs_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}
#endif

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// Output rows i_first .. i_first + ROWS - 1 (columns j0 .. j0 + 63) of a consumer warp group's
// accumulators to y. v45-v153 (store_ws_rows) staged each warp's 16 positions alone and stored
// 32-byte sectors, 16 lines a store instruction (v45 replaced 128 2-byte stores a thread). v154:
// the group's four warps (16 positions each) stage a whole row of 64 positions x 32 heads in the
// group's 4 KB at `gbuf` (the four warps' kWsStageWarpBytes), so each store instruction writes
// four whole 128-byte lines (8 lanes a line): a quarter of the L1 wavefronts for the same bytes.
// The store probe (fiftieth session) put an SM's sector stores at 44-55 GB/s and whole lines at
// 63; measured k 7 heads 32 -2.7% and -2.7% (B A A B, JOURNAL.md). stmatrix .trans turns each
// n-tile's two 8 x 8 fragments (positions x heads) into head rows of 8 positions. Head o's
// line sits at o x 128, its 16-byte chunk c (positions 8c .. 8c + 7) at 16 (c ^ (o & 7)): the
// eight rows of a stmatrix fragment (heads 8 q .. 8 q + 7, one chunk) fall in eight different
// bank groups, and a line's eight chunks are read by eight lanes at once. Named barrier `bar`
// (128 threads, the group's own) before a row's stmatrix (the last row's reads done) and after
// it (the row complete). A row past seq ends every warp of the group alike (i_first is the
// group's) and is not stored; columns past the diagonal are stored as zeros; a 16-byte chunk is
// wholly inside seq or wholly past it (seq a multiple of 8, the plan's condition for this
// kernel). v118: the accumulators hold the biases since the first wgmma, and an item wholly
// below the diagonal (all but the diagonal's) keeps every position without a test.
template <class T, int NT, int ROWS>
__device__ __forceinline__ void store_ws_lines(const FusedParams& p, float (&acc)[ROWS][NT * 4], int b,
                                               long long i_first, long long j0, unsigned gbuf, int bar) {
  static_assert(NT * 8 * 16 * 2 == kWsStageWarpBytes && sizeof(T) == 2, "one row of NT * 8 heads a warp");
  static_assert(NT == 4, "the group's row: 32 heads of 128 bytes in 4 warps' staging");
#pragma unroll
  for (int r = 0; r < ROWS; ++r) fence_acc(acc[r]);
  if constexpr ((kAblate & kAblateTileStores) != 0) {
    // The epilogue left out (gpu-ablate.sh). ptxas turns wgmmas whose accumulators are never read
    // into empty ones (a plain return here removed the whole contraction: 0 of its 392 HGMMAs
    // left), so their sum stays live behind a store that never runs (a sum with every bit set).
    float sum = 0.f;
#pragma unroll
    for (int r = 0; r < ROWS; ++r)
#pragma unroll
      for (int x = 0; x < NT * 4; ++x) sum += acc[r][x];
    if (__float_as_uint(sum) == 0xffffffffu) *static_cast<unsigned*>(p.y) = pack2<T>(sum, sum);
    return;
  }
  const int w = (threadIdx.x >> 5) & 3, lane = threadIdx.x & 31, g = lane >> 2;
  const auto at = [](int o, int c) { return static_cast<unsigned>(o * 128 + 16 * (c ^ (o & 7))); };
  // stmatrix: lanes 8 m .. 8 m + 7 address the rows of matrix m of an x4, matrix m = n-tile
  // 2 s + (m >> 1), half m & 1 (chunk 2 w + half); row k = head (2 s + (m >> 1)) * 8 + k.
  unsigned st_at[NT / 2];
#pragma unroll
  for (int s = 0; s < NT / 2; ++s) st_at[s] = gbuf + at((2 * s + (lane >> 4)) * 8 + (lane & 7), 2 * w + ((lane >> 3) & 1));
  const int d0 = static_cast<int>(min(i_first - j0, 1ll << 20)) - 16 * w - g;
  // Reads: warp w takes heads 8 w .. 8 w + 7, four a pass (8 lanes a line); lane's physical
  // chunk lane & 7 holds positions 8 c .. 8 c + 7, c = (lane & 7) ^ (o & 7).
  unsigned ld_at[2];
  T* y_at[2];
#pragma unroll
  for (int u = 0; u < 2; ++u) {
    const int o = 8 * w + 4 * u + (lane >> 3), c = (lane & 7) ^ (o & 7);
    const long long j = j0 + 8 * c;
    ld_at[u] = gbuf + static_cast<unsigned>(o * 128 + 16 * (lane & 7));
    y_at[u] = o < p.O && j < p.S
                  ? static_cast<T*>(p.y) + ((static_cast<long long>(b) * p.O + o) * p.S + i_first) * p.S + j
                  : nullptr;
  }
  const auto group_sync = [bar] { asm volatile("bar.sync %0, 128;\n" ::"r"(bar) : "memory"); };
  const auto rows = [&](auto all_kept) {
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
      if (i_first + r >= p.S) break;
      unsigned v[NT][2];
#pragma unroll
      for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const bool keep = decltype(all_kept)::value || 8 * h <= d0 + r;
          v[nt][h] = pack2<T>(keep ? acc[r][nt * 4 + 2 * h] : 0.f, keep ? acc[r][nt * 4 + 2 * h + 1] : 0.f);
        }
      group_sync();  // the group's reads of the last row (or item) are done
#pragma unroll
      for (int s = 0; s < NT / 2; ++s)
        asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(st_at[s]),
                     "r"(v[2 * s][0]), "r"(v[2 * s][1]), "r"(v[2 * s + 1][0]), "r"(v[2 * s + 1][1])
                     : "memory");
      group_sync();  // the row is whole
      if constexpr ((kAblate & kAblateWsRowReadStore) != 0) continue;
#pragma unroll
      for (int u = 0; u < 2; ++u) {
        uint4 val;
        asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n"
                     : "=r"(val.x), "=r"(val.y), "=r"(val.z), "=r"(val.w)
                     : "r"(ld_at[u])
                     : "memory");
        if constexpr ((kAblate & kAblateWsRowStore) != 0) {
          // Kept live behind a store that never runs (no value has every bit set in all four).
          if ((val.x & val.y & val.z & val.w) == 0xffffffffu) *static_cast<unsigned*>(p.y) = val.x;
          continue;
        }
        if (y_at[u] != nullptr) store_stream(y_at[u] + static_cast<long long>(r) * p.S, val);
      }
    }
  };
  if (i_first - j0 >= kWgmmaTJ - 1)
    rows(std::true_type{});
  else
    rows(std::false_type{});
}
#endif

// Chunk pair gp (channel groups 2 gp and 2 gp + 1) of fill8's tile, by the producer's threads:
// fill8's tasks with two groups instead of Cp / 8, the same loads, math and stores.
template <class T>
__device__ void fill8_pair(const FusedParams& p, const float* mbs, char* tile, int b, long long i0, long long j0,
                           int gp) {
  const int nv = p.TJ / 8 + 2, tasks = (p.R + 2 * p.r) * nv * 2;
  const auto slot_of = [nv, gp](int task) {
    const int rest = task / nv;
    return Fill8Slot{rest >> 1, task - rest * nv, 2 * gp + (rest & 1)};
  };
  fill8_tasks_of<T, kProducerThreads, kWsFillRotMask, decltype(slot_of), 1>(p, mbs, tile, b, i0, j0, threadIdx.x, tasks,
                                                                             slot_of);
}

// The shared state of the pipeline (static shared memory). Every pair's phases count the conv
// items handed over (v141; v42-v139 also handed stats items over pair 0's barriers).
struct WsShared {
  unsigned long long full[kWsMaxPairs], empty[kWsMaxPairs];
  int4 slot;       // the conv item handed over {b, band, tile, 0 or, timeline build, its ticket}; x < 0: no more
  int4 next_item;  // the producer's next ticket's item; x < 0: none left
#if MTABENCH_FUSED_TIMELINE
  unsigned next_ticket;  // next_item's ticket (the timeline's row)
#endif
};

template <class T>
__device__ void ws_produce(const FusedParams& p, char* smem, WsShared& sh) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  const int G2 = p.Cp >> 4;
  const auto take_next = [&p, &sh] {
    const unsigned t = atomicAdd(p.ticket, 1u);
    sh.next_item = t < static_cast<unsigned>(p.n_items) ? p.items[t] : make_int4(-1, 0, 0, 0);
#if MTABENCH_FUSED_TIMELINE
    sh.next_ticket = t;
#endif
  };
  unsigned handed = 0;  // conv items handed over so far: every pair's phase parity
  if (threadIdx.x == kProducerThreads - 1) take_next();
  producer_sync();
  for (;;) {
    const int4 cur = sh.next_item;
#if MTABENCH_FUSED_TIMELINE
    const unsigned ticket = sh.next_ticket;  // the item's timeline row, handed on in the slot's w
#else
    constexpr unsigned ticket = 0;
#endif
    producer_sync();  // also: every thread is done with the last item's statistics
    if (cur.x < 0) break;
    // The timeline's stamps (a timeline build only): the producer's thread 0.
    const auto stamp = [&p, ticket](int slot) {
      if (kTimeline && threadIdx.x == 0) timeline_ticket_mark(p, ticket, slot);
    };
    stamp(kTlWhere);
    stamp(kTlStart);
    if (threadIdx.x == kProducerThreads - 1) take_next();
    const long long last = min(static_cast<long long>(cur.z + 1) * p.R, p.S);
    // v141: no stats items: since v139 the statistics kernel runs ahead of this kernel in every
    // plan (p.prestats; make_plan), and their code (v42-v46's, handed to the consumers) is gone.
    if (cur.x == kStatsItem) __trap();
    if (cur.x == kZeroItem) {
      zero_item<T, kProducerThreads, true>(p, cur.y, cur.z, cur.w, static_cast<int>((last + p.TJ - 1) / p.TJ));
      // zero_item has no barrier of its own, and the loop's next read of next_item must wait for
      // thread 255's take_next (tile_stats ends with one; fused_kernel has a __syncthreads after
      // every item).
      producer_sync();
      stamp(kTlEnd);
    } else {
      const long long i0 = static_cast<long long>(cur.z) * p.R, j0 = static_cast<long long>(cur.w) * p.TJ;
      // 2.75 pairs a thread at k 7 heads 32, in one round of 4.
      // The statistics before the `empty[0]` wait, beside the consumers' first pair (the fifty-first
      // session moved them after it, MTABENCH_WS_STATS_LATE: +1.1%, JOURNAL.md).
      tile_stats<T, -1, kProducerThreads, 4, kWsProducerBarrier>(p, smem, cur.y, i0);  // ends with a barrier
      stamp(kTlStats);
      for (int gp = 0; gp < G2; ++gp) {
        // The consumers are done with the last item's pair (and, for pair 0, its slot).
        mbar_wait(&sh.empty[gp], (handed & 1u) ^ 1u);
        if (gp == 0) stamp(kTlFill);
        fill8_pair<T>(p, reinterpret_cast<const float*>(smem + p.sm_stats), smem + p.sm_p, cur.y, i0, j0, gp);
        if (gp == 0 && threadIdx.x == 0) sh.slot = make_int4(cur.y, cur.z, cur.w, static_cast<int>(ticket));
        mbar_arrive(&sh.full[gp]);
        if (gp == 0) stamp(kTlWsPair0);
      }
      stamp(kTlMma);
      ++handed;
    }
  }
  mbar_wait(&sh.empty[0], (handed & 1u) ^ 1u);
  if (threadIdx.x == 0) sh.slot = make_int4(-1, 0, 0, 0);
  mbar_arrive(&sh.full[0]);
#endif
}

template <class T, int NT, int KT>
__device__ void ws_consume(const FusedParams& p, char* smem, WsShared& sh) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr int N = NT * 8, ROWS = 8;
  const int w = (threadIdx.x >> 5) & 3, lane = threadIdx.x & 31;
  const int r0 = (warp_group() - kProducerGroups) * ROWS;
  const unsigned tile_addr = smem_u32(smem + p.sm_p), w_addr = smem_u32(smem + p.sm_w);
  const unsigned y_group = smem_u32(smem + p.sm_y) + (r0 / ROWS) * 4 * kWsStageWarpBytes;  // the group's row staging
  const unsigned b_lo0 = smem_desc_lo(w_addr, wgmma_b_lbo(p)), hi = kWgmmaSbo >> 4;
  const unsigned a_lane = tile_addr + static_cast<unsigned>(wgmma_rs_a_offset(p, r0, 0, 0, w, lane));
  const unsigned row_b = static_cast<unsigned>(p.PW) * 16u;
  const int G2 = p.Cp >> 4, bstep = p.NT << 4;
  const unsigned b_u = static_cast<unsigned>(KT * G2 * bstep);
  float bias_r[NT][2];
  load_bias_pairs<NT>(p, smem, bias_r);
  for (unsigned handed = 0;; ++handed) {
    mbar_wait(&sh.full[0], handed & 1u);
    const int4 it = sh.slot;
    if (it.x < 0) break;
    // The timeline's stamps (a timeline build only): the first consumer thread, it.w the ticket.
    const bool stamp = kTimeline && threadIdx.x == kProducerThreads;
    const bool stamp1 = kTimeline && threadIdx.x == kProducerThreads + 128;  // the second group's
    if (stamp) timeline_ticket_mark(p, it.w, kTlWsTake);
    if (stamp1) timeline_ticket_mark(p, it.w, kTlWsTake1);
    float acc[ROWS][N / 2];
    bias_acc(acc, bias_r);
    unsigned a[kWsSets][kWsColumns][4];  // the fragment sets, rotating on across the chunk pairs (v115)
    #pragma unroll 1
    for (int gp = 0; gp < G2; ++gp) {
      if (gp > 0) mbar_wait(&sh.full[gp], handed & 1u);
      if (stamp && gp == G2 - 1) timeline_ticket_mark(p, it.w, kTlWsLast);
      rs_window_row<T, NT, KT, kWsColumns, 0, 0, kWsWait>(acc, a, a_lane + static_cast<unsigned>(gp * 2 * p.cstride),
                                                          row_b, b_lo0 + static_cast<unsigned>(gp * bstep),
                                                          static_cast<unsigned>(G2 * bstep), b_u, hi);
      // The last wgmmas may still run, but they read registers and the weights only: every
      // ldmatrix of the pair was consumed by a wgmma.fence before this.
      mbar_arrive(&sh.empty[gp]);
      if (stamp && gp == 0) timeline_ticket_mark(p, it.w, kTlWsIssued0);
    }
    wgmma_wait<0>();
    if (stamp) timeline_ticket_mark(p, it.w, kTlWsMma);
    const long long i0 = static_cast<long long>(it.y) * p.R, j0 = static_cast<long long>(it.z) * p.TJ;
    store_ws_lines<T, NT, ROWS>(p, acc, it.x, i0 + r0, j0, y_group, kWsConsumerBarrier0 + r0 / ROWS);
    if (stamp) timeline_ticket_mark(p, it.w, kTlEnd);
    if (stamp1) timeline_ticket_mark(p, it.w, kTlWsEnd1);
  }
#endif
}

template <class T, int NT, int KT>
__global__ void __launch_bounds__(kWsThreads, 1) fused_kernel_ws(const FusedParams p) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ __align__(16) char smem[];
  __shared__ WsShared sh;
  timeline_block_mark(p, kTlEntry);
  if (threadIdx.x < kThreads) setup_block<T, true, true>(p, smem);
  if (threadIdx.x == 0)
    for (int gp = 0; gp < (p.Cp >> 4); ++gp) {
      mbar_init(&sh.full[gp], kProducerThreads);
      mbar_init(&sh.empty[gp], kWsThreads - kProducerThreads);
    }
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");  // the weights, for the wgmmas
  // v132: behind the statistics kernel (p.prestats, always with this kernel now), as fused_kernel
  // waits: the set-up above reads only the weights and the bias.
  if (p.prestats) asm volatile("griddepcontrol.wait;" ::: "memory");
  timeline_block_mark(p, kTlSetup);
  __syncthreads();
  timeline_block_mark(p, kTlSetupBarrier);
  if (threadIdx.x < kProducerThreads) {
    regs_dec<kProducerRegs>();
    ws_produce<T>(p, smem, sh);
  } else {
    regs_inc<kConsumerRegs>();
    ws_consume<T, NT, KT>(p, smem, sh);
  }
  __syncthreads();
  timeline_block_mark(p, kTlExit);
  reset_if_last<kWsThreads>(p);
#else
  __trap();  // never planned without sm_90a (make_plan's wgmma_ok)
#endif
}

}  // namespace mtabench::fused
