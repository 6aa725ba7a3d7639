#pragma once
// The fused kernel's parameters: a plain struct (after flash-attention's flash.h) built on the
// host by fused_plan.cpp and passed by value to the kernel.
#include <vector_types.h>

#include <cstdint>

namespace mtabench::fused {

// Item timeline switch (tools/gpu-timeline.sh builds with MTABENCH_FUSED_TIMELINE=1; see
// fused_common.cuh): kTimelineWords stamps per ticket in p.timeline.
#ifndef MTABENCH_FUSED_TIMELINE
#define MTABENCH_FUSED_TIMELINE 0
#endif
constexpr bool kTimeline = MTABENCH_FUSED_TIMELINE != 0;
// start, statistics in, fill done, contraction done, end, sm << 32 | block; then four words only the
// warp-specialised kernel stamps (TimelineSlot's kTlWs*), and since the fiftieth session three more
// of it (its first pair's wgmmas issued; the second consumer group's take and end).
constexpr int kTimelineWords = 13;
// Per block, after the tickets' rows: entry, thread 0's set-up done, the set-up's barrier passed,
// exit.
constexpr int kTimelineBlockWords = 4;
enum TimelineBlockWord : int { kTlEntry = 0, kTlSetup = 1, kTlSetupBarrier = 2, kTlExit = 3 };

// The statistics kernel's fold (prestats_fold, fused_plan.h; fused_prestats.cuh).
enum class PrestatsFold { generic = 0, aligned = 1, lined = 2, stream = 3 };
enum TimelineSlot : int { kTlStart = 0, kTlStats = 1, kTlFill = 2, kTlMma = 3, kTlEnd = 4, kTlWhere = 5,
                          kTlWsPair0 = 6, kTlWsTake = 7, kTlWsLast = 8, kTlWsMma = 9, kTlWsIssued0 = 10,
                          kTlWsTake1 = 11, kTlWsEnd1 = 12 };
// The warp-specialised kernel's conv item (fused_ws.cuh; producer = its thread 0, consumers = the
// first consumer thread, each after its own step, not a team barrier): kTlStart the producer took
// the item, kTlStats its statistics are in, kTlFill pair 0's `empty` passed (the consumers were
// done with the last item's pair 0), kTlWsPair0 pair 0 written, kTlMma the last pair written;
// kTlWsTake the consumers passed `full[0]`, kTlWsLast the last pair's `full`, kTlWsMma their
// wgmmas done, kTlEnd their stores done; kTlWsIssued0 the first consumer thread's pair 0 wgmmas
// issued (its `empty[0]` arrival: from there to kTlWsLast it waits for the last pair, if at all);
// kTlWsTake1 and kTlWsEnd1 the second consumer group's first thread passing `full[0]` and done
// with its stores (whether the two groups run in step). A zero item: kTlStart and kTlEnd, both the
// producer's.

// Work items, in the order blocks take them (see fused_plan.cpp for why this order).
enum ItemType : int { kStatsItem = 0, kConvItem = 1, kZeroItem = 2 };

// The ldmatrix path's m-tiles per warp (a kernel template constant too): 16 accumulator tiles
// (64 registers) for up to 32 heads, 16 for 64 (NT = 8).
// (A class template rather than a constexpr function: usable in host and device code alike.)
template <int NT>
struct LdsmMtiles {
  static constexpr int value = NT <= 2 ? 8 : NT == 4 ? 4 : 2;
};
inline int ldsm_mtiles(int nt) {
  return nt <= 1 ? LdsmMtiles<1>::value : nt == 2 ? LdsmMtiles<2>::value : nt == 4 ? LdsmMtiles<4>::value : LdsmMtiles<8>::value;
}
// v127: the ldmatrix path's instances by tile (the kernel's NARROW): 0 the wide tile (8 *
// ldsm_mtiles(NT) columns), 1 the 16-column fallback, kLdsmHalf (NT 2 only) half the wide tile
// (kLdsmHalfMtiles m-tiles a warp, 32 columns) at two blocks an SM, kLdsmTwoPass (v130, NT 2
// only) the wide tile at two blocks an SM, its 8 m-tiles a warp contracted in two passes of 4
// (half the accumulators live; the staging tile then has a space of its own, p.ldsm_passes 2).
constexpr int kLdsmHalf = 2, kLdsmHalfMtiles = LdsmMtiles<2>::value / 2, kLdsmTwoPass = 3;
template <int NT, int NARROW>
struct LdsmInstanceMtiles {
  static constexpr int value = NARROW == 1 ? 2 : NARROW == kLdsmHalf ? kLdsmHalfMtiles : LdsmMtiles<NT>::value;
};
template <int NARROW>
struct LdsmPasses {
  static constexpr int value = NARROW == kLdsmTwoPass ? 2 : 1;
};

struct FusedParams {
  const void* scores;
  const void* weight;
  const void* bias;
  void* y;
  long long S;    // seq
  int B, C, O, K, r;
  // Tiling. A band is R consecutive output rows of one batch; a tile is TJ columns of a band.
  int R, TJ;
  int CS;  // columns per stats item (a chunk of the band's rows)
  // A stats item is split into units of (row, channel, segment of SEG columns), one partial
  // each; SEG is a power of two >= 64 dividing CS (the lanes per unit: stats_item); since v7
  // SEG = CS.
  int SEG;
  int ZC;  // columns per zero item (the part of the band above the diagonal)
  int Q;   // bands per batch
  // Tensor-core (mma) layout: channels padded to Cp (even); the probability tile stores Cp
  // values per (row, column) with a column pitch of pitch_w 32-bit words; PW = TJ + 2r columns
  // (TJ + 16 on the ldmatrix path and with fill4).
  int Cp, pitch_w, PW;
  // Four-channel vector fill (heads_in 3 or 4, 16-bit types, seq a multiple of 8) and the
  // ldmatrix path: the tile's column 0 is output column j0 - 8, so 16-byte loads line up;
  // col0 = 8 - r is then the tile column of j0 - r. Otherwise column 0 is j0 - r and col0 = 0.
  int fill4, col0;
  // fill4 (v7): A fragments by ldmatrix from 16-byte chunks (two columns x four channels); a
  // window row is NPAIR chunks from tile column col0 - (r & 1), NCH = K * NPAIR chunks in all.
  int NPAIR;
  unsigned fill4_magic;  // fill4_magic(fill4_vectors): fill4_task's division (fused_contraction.h)
  // v59: fill4 tasks kThreads .. kThreads + fill4_stage - 1 (the first fill4_stage threads' second
  // task) go through the y staging space by cp.async (fill4_stage_copy); 0: none, or no room.
  int fill4_stage;
  int NT;      // n-tiles of 8 output heads (a template parameter of the kernel too)
  // Column interleave for few heads (heads_out <= 4): the 8 n-columns of an n-tile are
  // (head, h) with h < H = 8/O4, and output column h of a position pair reads the window shifted
  // by h, so one mma produces H columns per row of A. KW = K + H - 1 window columns.
  int H, KW;
  // ldmatrix layout (heads_out > 4, so H = 1): channels padded to Cp, a multiple of 8; the
  // contraction runs over chunks of 8 channels at one tap (u, v), NCH = K*K*Cp/8 of them, two
  // per k-step; a column is pitch_w words, an odd number of 16-byte units, so the 8 columns of
  // one ldmatrix phase fall in 8 different bank groups. The y staging tile overlays the
  // probability tile.
  int ldsm, NCH;  // (NCH also counts the fill4 chunks)
  int ksteps;  // k-steps of 16 over the contraction K*KW*Cp (padded)
  int Kreal;   // K*KW*Cp, the unpadded contraction length
  int kchunk;  // k-steps of weight fragments held in shared memory at a time (= ksteps: all)
  // wgmma (sm_90a, heads_in a multiple of 16, all weights in shared memory): the probability
  // tile is channel-chunk-major, [c / 8][row][column] x 16 bytes, chunks cstride bytes apart, so
  // a tap's im2col shift is a descriptor's start address; the weights are no-swizzle core
  // matrices [k-step][k half][n-tile][8 heads][8 k] (fused_wgmma.cuh). TJ = 64: one m64 tile
  // per row.
  int wgmma, cstride;
  // wgmma_rs (k 5 or 7, up to 32 heads out): A from registers instead (fused_wgmma.cuh,
  // conv_item_wgmma_rs): each A fragment is loaded once by ldmatrix and feeds every output row it
  // serves; the kernel's K is then a template constant.
  int wgmma_rs;
  // ws (v41; wgmma_rs with 4 n-tiles, heads_in 32-64, seq a multiple of 8, shared statistics):
  // the warp-specialised kernel (fused_ws.cuh), `threads` a block (512; otherwise 256).
  int ws, threads;
  int CG;      // fp32 path: channels per probability tile
  int w_global;  // fp32 path: weights read from global memory (too many for shared memory)
  int local_stats;  // each block computes the statistics of the rows it needs (small seq)
  // v82: every row's statistics come from a kernel of their own launched just before this one
  // (fused_prestats.cuh); the plan has no stats items, and the band flags are raised already.
  int prestats;
  int sms;  // the device's SMs: the streaming statistics kernel's grid (v138), one block an SM
  const int4* items;  // {type, b, band, chunk}
  int n_items;
  int nch_max;         // stats segments of the longest band (stats chunks x CS / SEG)
  float2* partials;    // [B][S][C][nch_max] (max, sum) of each stats segment, log2 domain
  float2* stats;       // [B][S][C] (max, 1/sum), log2 domain; v55: channel-fastest, so a tile's
                       // consecutive (row, channel) pairs are consecutive 8-byte loads
  unsigned* band_count;  // [B*Q] stats items done per band
  unsigned* band_ready;  // [B*Q] 1 once the band's statistics are merged
  unsigned* ticket;      // next work item
  unsigned* done;        // blocks finished (the last one resets the counters)
  // Shared memory layout, bytes from the start.
  int sm_w, sm_bias, sm_koff, sm_stats, sm_p, sm_y, sm_total;
  int yhp;  // staging tile: elements per head (R rows of TJ + 8, plus 8 for the ldmatrix path)
  // Item timeline (a build with MTABENCH_FUSED_TIMELINE only, fused_common.cuh; else null and
  // never read): kTimelineWords per ticket, then kTimelineBlockWords per block, %globaltimer ns.
  unsigned long long* timeline;
  // The statistics kernel's blocks (v82, timeline build only; else null): entry and exit, two
  // words a block.
  unsigned long long* timeline_prestats;
  // v83: while an item's ticket is below this, its block takes the next ticket during the item;
  // from here on (the last wave), after it (fused_kernel.cuh; fused_plan.cpp says when).
  int early_tickets;
  // v130: the ldmatrix wide tile's contraction passes (1, or 2 for kLdsmTwoPass: the staging
  // tile then does not overlay the probability tile, which the second pass still reads). Last,
  // so that the other fields keep their offsets in the kernels' parameter space.
  int ldsm_passes;
};
// A field of stricter alignment (a CUtensorMap's 64 bytes, say) moves the whole block in every
// kernel's parameter space, and ptxas then builds the kernels differently: v146's null control
// (an unused CUtensorMap at the end) made the few-heads instance 3.1-3.6% slower at seq 4096
// with no instruction of its own changed (JOURNAL.md, v146). Such data goes in a parameter of its
// own (fused_kernel_ws's tensor maps on branch fused-v146b).
static_assert(alignof(FusedParams) == 8, "FusedParams must stay 8-byte aligned (see above)");

// v127: the instance a tensor-core plan's ldmatrix tile takes (mma_instance's `narrow`): 1 for
// the 16-column tile, kLdsmHalf for NT 2's 32-column one, else 0 (the wide tile, or no ldmatrix).
inline int ldsm_narrow(const FusedParams& p) {
  return !p.ldsm || p.wgmma ? 0
         : p.TJ == 16                                 ? 1
         : p.NT == 2 && p.TJ == 8 * kLdsmHalfMtiles   ? kLdsmHalf
         : p.NT == 2 && p.ldsm_passes == 2            ? kLdsmTwoPass
                                                      : 0;
}

}  // namespace mtabench::fused
