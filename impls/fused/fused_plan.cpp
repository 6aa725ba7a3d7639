#include "impls/fused/fused_plan.h"

#include "impls/fused/fused_contraction.h"

#include <fmt/core.h>
#include <vector_functions.h>

#include <algorithm>

namespace mtabench::fused {

namespace {
constexpr int kRows = 16;          // R: rows per band; >= 2r for every k <= 11, so a tile's halo
                                   // needs only the neighbouring bands' statistics
constexpr int kZeroCols = 2048;    // columns per zero item
// The warp-specialised plans' zero items at other widths (a build knob of the fiftieth and
// fifty-first sessions, removed): with the producer bounding (p76) 512 +0.9% and 1024 -0.3%; with
// the consumers bounding, k 7 heads 32 256 +2.8%, 512 +1.2%, 1024 +0.2%, 4096 +0.1%: narrower
// items cost more in hand-overs than the consumers' waits behind them save (JOURNAL.md).
constexpr int kLocalMaxSeq = 256;  // up to here a block computes its own rows' statistics
constexpr int kFmaChannels = 8;    // fp32 path: channels per probability tile
int align16(int x) { return (x + 15) / 16 * 16; }
long long ceil_div(long long a, long long b) { return (a + b - 1) / b; }
}  // namespace

int stats_chunks(const FusedParams& p, int q) {
  const long long last = std::min<long long>(static_cast<long long>(q + 1) * p.R, p.S);
  return static_cast<int>(ceil_div(last, p.CS));
}
int lower_tiles(const FusedParams& p, int q) {
  const long long last = std::min<long long>(static_cast<long long>(q + 1) * p.R, p.S);
  return static_cast<int>(ceil_div(last, p.TJ));
}
int zero_chunks(const FusedParams& p, int q) {
  const long long start = static_cast<long long>(lower_tiles(p, q)) * p.TJ;
  return start >= p.S ? 0 : static_cast<int>(ceil_div(p.S - start, p.ZC));
}

std::string FusedPlan::describe() const {
  return fmt::format("{} R={} TJ={} CS={} Q={} items={} local_stats={} prestats={} Cp={} NT={} ksteps={} kchunk={} smem={}B",
                     !mma ? "fma" : p.ws ? "wgmma-ws" : p.wgmma_rs ? "wgmma-rs" : p.wgmma ? "wgmma" : p.ldsm ? "mma-ldmatrix" : "mma", p.R, p.TJ, p.CS, p.Q, items.size(), p.local_stats, p.prestats, p.Cp, p.NT, p.ksteps,
                     p.kchunk, p.sm_total);
}

namespace {

// The plan with bands of `rows` rows (kFewRows for the interleave path only: make_plan); `force_ldsm`:
// the ldmatrix path for any heads_out.
FusedPlan plan_with_rows(const Workload& w, int smem_optin, int window, int lead_windows, bool wgmma_ok, int rows,
                         bool force_ldsm) {
  FusedPlan plan;
  FusedParams& p = plan.p;
  plan.mma = w.dtype != DType::fp32;
  p.S = w.seq;
  p.B = static_cast<int>(w.batch);
  p.C = static_cast<int>(w.heads_in);
  p.O = static_cast<int>(w.heads_out);
  p.K = w.k;
  p.r = w.r();
  p.R = rows;
  // The tensor-core contraction's layout: heads_out > 4 (or when the interleave's tile does not
  // fit) takes A fragments by ldmatrix from 8-channel chunks (v4); fewer heads keep the column
  // interleave, which needs channel pairs only.
  auto contraction = [&](bool ldsm) {
    p.ldsm = plan.mma && ldsm ? 1 : 0;
    p.Cp = p.ldsm ? (p.C + 7) / 8 * 8 : p.C + (p.C & 1);
    // 32-bit words per probability-tile column: Cp/2, plus 4 when that is a multiple of 8, so
    // the 8 columns a warp's A-fragment load touches fall in different banks (for Cp a multiple
    // of 8 this is an odd number of 16-byte units: what ldmatrix needs).
    p.pitch_w = p.Cp / 2 + ((p.Cp / 2) % 8 == 0 ? 4 : 0);
    // n-tiles of 8 heads, rounded up to the kernel's instances (1, 2, 4, 8); extra tiles meet
    // zero weights and are never stored. The ldmatrix path takes at least the NT = 2 instance,
    // so that the NT = 1 instance -- the few-heads hot path, capped at 64 registers -- holds no
    // ldmatrix code.
    p.NT = 1;
    while (p.NT * 8 < p.O) p.NT *= 2;
    if (p.ldsm) p.NT = std::max(p.NT, 2);
    p.H = p.ldsm ? 1 : p.O <= 1 ? 8 : p.O <= 2 ? 4 : p.O <= 4 ? 2 : 1;
    p.KW = p.K + p.H - 1;
    p.Kreal = p.K * p.KW * p.Cp;
    p.ksteps = (p.Kreal + 15) / 16;
    p.NCH = p.ldsm ? p.K * p.K * p.Cp / 8 : 0;
    if (p.ldsm) p.ksteps = (p.NCH + 1) / 2;  // an odd last chunk meets zero weights
    p.fill4 = plan.mma && p.Cp == 4 && p.S % 8 == 0 && p.r <= 8 ? 1 : 0;
    p.col0 = p.fill4 || p.ldsm ? 8 - p.r : 0;
    // v7: the four-channel tile's A fragments by ldmatrix, from 16-byte chunks of two columns x
    // four channels; a window row starts at the even tile column col0 - (r & 1) and is NPAIR
    // chunks long (one more column than KW when r is odd, rounded up to a pair).
    p.NPAIR = p.fill4 ? (p.KW + (p.r & 1) + 1) / 2 : 0;
    if (p.fill4) {
      p.NCH = p.K * p.NPAIR;
      p.ksteps = (p.NCH + 1) / 2;
    }
  };
  contraction(p.O > 4 || force_ldsm);
  p.CG = std::min(p.C, kFmaChannels);
  plan.KT = (!plan.mma && (p.K == 3 || p.K == 5 || p.K == 7)) ? p.K : 0;
  // About 32K scores per stats item whatever the channel count (v3: 128K items were slower), but
  // chunks of at least 128 columns (v27: at 32 channels 64-column chunks made a lane's unit one
  // batch of 128 bytes, and twice the items and band merges: -5.9% at k 7 heads 32), since v30
  // of at least 256 (half the items and merges again: k 7 heads 32 -2.6%, k 5 heads 16 -3.6%),
  // since v31 of at least 512 (128K-256K scores an item at 16-32 channels: -0.9%, -2.3%, and
  // heads_in 8 -1.0%; the gains shrink, so 1024 was not tried).
  int cs = 1024;
  while (cs > 512 && static_cast<long long>(cs) * p.R * p.C > 32768) cs /= 2;
  p.CS = cs;
  p.SEG = cs;  // v7: one unit per (row, channel) of a chunk (stats_item)
  p.ZC = kZeroCols;
  p.Q = static_cast<int>(ceil_div(p.S, p.R));
  // Local statistics (each tile computes its halo rows' own, one item per block) up to seq 256.
  // v6a took them up to seq 512 with at most 4 channels (-15% then against v5's shared chain);
  // since v7-v31 made the shared path's items cheaper, shared statistics are 5.6% faster at seq
  // 512 (v38; JOURNAL.md), and at seq 1024 local ones are +64% (v37's probe; +40% in v6).
  p.local_stats = p.S <= kLocalMaxSeq ? 1 : 0;
  if (plan.mma && p.NT > 8) {
    plan.why_not = fmt::format("heads_out {} > 64", p.O);
    return plan;
  }

  const int halo_rows = p.R + 2 * p.r;
  const int elem = static_cast<int>(dtype_size(w.dtype));
  // A halo row's statistics in shared memory: (max, 1 / sum) per channel, or, for the tensor-core
  // fills, max + log2 sum per padded channel (tile_stats; v24's eight-channel fill has Cp floats).
  auto stats_row_bytes = [&] { return std::max(p.C * 8, plan.mma ? p.Cp * 4 : 0); };
  auto layout = [&](int tj, int kchunk) {
    p.TJ = tj;
    p.PW = p.fill4 || p.ldsm ? tj + 16 : tj + 2 * p.r;
    p.fill4_magic = p.fill4 ? fill4_magic(fill4_vectors(p)) : 0u;
    p.kchunk = kchunk;
    int off = 0;
    p.sm_w = off;
    if (plan.mma) off += align16(kchunk * p.NT * 32 * 8);
    else off += p.w_global ? 0 : align16(((p.O + 3) / 4 * 4) * p.C * p.K * p.K * 4);
    p.sm_bias = off;
    off += align16(((p.O + 7) / 8 * 8) * 4);
    p.sm_koff = off;
    off += plan.mma ? align16(p.ksteps * (p.ldsm || p.fill4 ? 2 : 8) * 4) : 0;
    p.sm_stats = off;
    off += align16(halo_rows * stats_row_bytes());
    p.sm_p = off;
    if (plan.mma) off += align16(halo_rows * p.PW * p.pitch_w * 4);
    else off += align16(p.CG * halo_rows * fp32_pitch(p) * 4);  // v100: the shifted rows
    // + 8 (ldmatrix path) or + 16 (interleave: a head is then 8 banks from the next, v7): the t
    // lanes' heads in different banks.
    p.yhp = p.R * (tj + 8) + (p.ldsm ? 8 : 16);
    const int staging = plan.mma ? align16(p.O * p.yhp * elem) : 0;
    if (p.ldsm && p.ldsm_passes < 2) {  // the staging tile reuses the probability tile's space
      p.sm_y = p.sm_p;
      off = std::max(off, p.sm_p + staging);
    } else {
      p.sm_y = off;
      off += staging;
    }
    // v59: the four-channel fill's second round (tasks past the block's threads, one more a
    // thread at most) staged in the y staging space, which is free during the fill; none where
    // that space is short.
    const int nthr = p.ldsm ? 256 : kFewThreads;  // the block (p.threads, set below)
    const int tail = p.fill4 ? std::min(fill4_tasks(p), 2 * nthr) - nthr : 0;
    p.fill4_stage = tail > 0 && !p.ldsm && tail * 64 <= staging ? tail : 0;
    p.sm_total = off;
    return off <= smem_optin;
  };
  bool fits = false;
  // Tensor cores. The interleave path: a warp holds 8 accumulator tiles, TJ = 16 H, at most
  // 128 columns (PW <= 160 for the tile fill), narrower (down to one m-tile of 16 H columns)
  // when shared memory is short. The ldmatrix path: 8 warps x ldsm_mtiles(NT) m-tiles of 16
  // columns over R = 16 rows, or, when that does not fit, TJ = 16 (2 m-tiles per warp, its own
  // compile-time instance: the m-tile loops have no run-time bounds). Each tile takes all the
  // weights if they fit, else the largest chunk of k-steps that does.
  // v38: with shared statistics the interleave path's tile narrows (down to one m-tile) until it
  // makes at least kPlanWindow conv items: seq 512 (4 channels, batch 2) had 160 at 128 columns
  // for 528 block slots, most blocks idle and the kernel one item's latency long. Against v31
  // (local statistics, 128 columns) at seq 512: shared at 128 columns -5.6%, at 64 (288 items)
  // -12.8%, at 32 (544 items, each filling 48 columns for 32) -5.5% (call 3 of the ninth
  // session, JOURNAL.md v38). Local statistics keep the widest tile: each narrow item recomputes
  // its halo rows' statistics over whole rows (v36: +62%). kPlanWindow and not the window
  // argument: the launch plans twice (the second time for its grid), and both must pick the
  // same tile.
  auto conv_items = [&](int tj) {
    FusedParams at = p;
    at.TJ = tj;
    long long n = 0;
    for (int q = 0; q < p.Q; ++q) n += lower_tiles(at, q);
    return n * p.B;
  };
  const int plan_window = rows == kFewRows ? kFewPlanWindow : kPlanWindow;
  auto search = [&]() {
    const int narrowest = p.ldsm ? 16 : 16 * p.H;
    int widest = p.ldsm ? 8 * ldsm_mtiles(p.NT) : std::min(128, 16 * p.H * std::max(1, 4 / p.NT));
    if (!p.ldsm && !p.local_stats)
      while (widest > narrowest && conv_items(widest) < plan_window) widest /= 2;
    // A tile of tj columns with the most k-steps of weights that fit in `budget` bytes.
    const auto fits_in = [&](int tj, int budget) {
      for (int kc = p.ksteps; kc >= 1; kc = kc > 8 ? kc / 2 : kc - 1)
        if (layout(tj, kc) && p.sm_total <= budget) return true;
      return false;
    };
    // v127: NT 2's half tile (32 columns, its own instance at two blocks an SM) where two fit in
    // an SM's shared memory (each block's 1 KB reserve besides), ahead of the wide one. v130:
    // ahead of both, the wide tile in two passes at two blocks an SM (its staging tile a space of
    // its own), where two of those fit.
    if (p.ldsm && p.NT == 2) {
      const int two_fit = (smem_optin + 1024) / 2 - 1024;
      p.ldsm_passes = 2;
      if (fits_in(widest, two_fit)) return true;
      p.ldsm_passes = 1;
      if (fits_in(8 * kLdsmHalfMtiles, two_fit)) return true;
    }
    for (int tj = widest; tj >= narrowest; tj = p.ldsm ? (tj == 16 ? 0 : 16) : tj / 2)
      if (fits_in(tj, smem_optin)) return true;
    return false;
  };
  // wgmma (fused_wgmma.cuh): the ldmatrix path's contraction with both operands in shared
  // memory, when heads_in is a multiple of 16 (a k-step is two 8-channel chunks at one tap) and
  // the whole tile and all the weights fit: TJ = 64 (one m64 tile per row). The shared-operand
  // instances store their accumulators to y directly; the register-A ones stage them (v29).
  // A from registers where its instances exist (k 5 and 7; 8 rows' accumulators of up to 32
  // heads out per warp group: 128 registers).
  const bool rs = (p.K == 5 || p.K == 7) && p.NT <= 4;
  // v41: warp-specialised (fused_ws.cuh) where its instances exist (4 n-tiles), the tile has at
  // least two chunk pairs to pipeline and at most kWsMaxPairs, the fill is fill8's (seq a
  // multiple of 8) and the statistics are shared (items taken by ticket). Its y staging is a
  // space of its own after the tile (kWsStageBytes, v45: the tile's is the next item's while the
  // consumers store); where that does not fit, the register-A kernel.
  bool ws = rs && p.NT == 4 && p.Cp >= 32 && p.Cp <= 64 && p.S % 8 == 0 && !p.local_stats;
  auto wgmma_layout = [&]() {
    p.TJ = kWgmmaTJ;
    p.PW = p.TJ + 16;
    p.kchunk = p.ksteps;
    int off = 0;
    p.sm_w = off;
    off += p.ksteps * p.NT * 256;  // [k-step][k half][n-tile] core matrices of 128 bytes
    p.sm_bias = off;
    off += align16(((p.O + 7) / 8 * 8) * 4);
    p.sm_koff = off;  // no table: the kernel computes each k-step's offset (v13)
    p.sm_stats = off;
    off += align16(halo_rows * stats_row_bytes());
    // A chunk's stride is 16 bytes past a multiple of 128, so the fill's stores of one
    // column's 8-channel chunks fall in different banks.
    p.cstride = (halo_rows * p.PW + 7) / 8 * 8 * 16 + 16;
    p.sm_p = off;
    off += (p.Cp / 8) * p.cstride;
    p.sm_y = p.sm_p;
    p.yhp = 0;
    if (ws && off + kWsStageBytes > smem_optin) ws = false;
    if (ws) {
      p.sm_y = off;
      off += kWsStageBytes;
    }
    if (rs && !ws) {
      // v29: the register-A path stages its outputs in the tile (dead after the k-loop) for
      // store_staging (wgmma_staged_offset).
      static_assert(kRows == kWgmmaRows, "the staged layout's rows are the band's");
      p.yhp = kWgmmaYhp;
      off = std::max(off, p.sm_p + align16(p.O * p.yhp * elem));
    }
    p.sm_total = off;
    return off <= smem_optin;
  };
  p.wgmma = p.wgmma_rs = p.ws = 0;
  p.threads = 256;  // kThreads
  if (plan.mma && wgmma_ok && p.ldsm && p.Cp % 16 == 0 && wgmma_layout()) {
    p.wgmma = 1;
    p.wgmma_rs = rs;
    p.ws = ws;
    if (ws) p.threads = 512;  // kWsThreads (v151; 384 before)
    fits = true;
  } else if (plan.mma) {
    fits = search();
    // Many channels and 1-4 heads out: the interleave's 128-column tile does not fit; the
    // ldmatrix path's 16-column one does (for every heads_in <= 64, k <= 11).
    if (!fits && !p.ldsm) {
      contraction(true);
      fits = search();
    }
    if (!p.ldsm) p.threads = kFewThreads;
  } else {
    p.w_global = 0;
    fits = layout(128, 0);
    if (!fits) {
      p.w_global = 1;  // uniform loads through L1 instead
      plan.KT = 0;     // only the general instance reads them there (v94b: one loop per instance)
      fits = layout(128, 0);
    }
  }
  // v82: up to kPrestatsMaxSeq, the statistics ahead of the kernel (fused_prestats.cuh) rather
  // than as its items: the item timeline put ~8-9 us of a seq 512-1024 launch in the conv
  // items' wait for the statistics chain (a stats item's serial loads, partials, count, merge,
  // flag), which one warp per whole row does in about one round trip. Measured (JOURNAL.md
  // v82): fp32 seq 1024 -7.1%, heads 8/12 at seq 777 (ldmatrix path) -1.0%, but the few-heads
  // tensor-core instance +11..+16% at seq 512-1024 (and +10.7% at seq 2048 with the bound at
  // 2048): its statistics kernel folded every lane's 64 values, most of them masked. v84 folds
  // only the real ones and takes the few-heads instance too, v85r up to kPrestatsFewHeadsMaxSeq
  // (seq 512 -6.8%, seq 1000-1024 +17..+18% above it).
  const long long prestats_max = plan.mma && !p.ldsm ? kPrestatsFewHeadsMaxSeq : kPrestatsMaxSeq;
  // v132: and, whatever seq, ahead of the warp-specialised kernel, whose consumers spent ~16% of
  // their time in its stats items (k 7 heads 32, JOURNAL.md v121's profile) with the tensor
  // pipe idle; the statistics kernel reads the triangle once instead. With v132's wide fold (222
  // us) k 7 heads 32 was +0.6%; with v139's streaming fold (140 us) -5.0% (JOURNAL.md v138-v139).
  p.prestats = !p.local_stats && (p.ws || p.S <= prestats_max) ? 1 : 0;
  if (!fits) {
    plan.why_not = fmt::format("no tiling fits in {} bytes of shared memory per block (k {}, heads {}/{})", smem_optin,
                               p.K, p.C, p.O);
    return plan;
  }

  // Work order. Tiles go band by band (batches interleaved, so all batches progress together).
  // v75: the zero chunks (y stores only, waiting for nothing) are spread evenly among the conv
  // tiles, zero chunk z before conv tile floor(z x tiles / zeros), instead of following their
  // bands' tiles: the top bands are nearly all zeros and the bottom ones nearly all tiles, so
  // in band order 74-87% of the zero chunks (seq 2048-8192, fused-plan-report's "zero 1st") came
  // before half of the tiles, their writes on top of the tiles' reads, and the second half had
  // DRAM to spare (v74, which moved them all to the start, was 2-5% slower; spread, seq 2048
  // -2.7%, 4096-8192 -1.2..-1.4%). The statistics of band t are placed at least
  // lead_windows x window items before the first tile that needs them (band t - 1's), so by the
  // time that tile is taken they are finished: tiles rarely wait, and the rows they re-read are
  // still in L2. Each block holds two tickets (it takes the next while it works), so 2 x window
  // items are taken but not necessarily started: v3's lead of 2 windows left no slack, and tiles
  // waited for their statistics 20% of the time (Nsight Compute, seq 4096); a lead of 4 windows
  // took seq 4096 from 403 to 349 us, 6 windows only 1% more (v4, JOURNAL.md). Every item
  // waits only on items earlier in the order, and blocks take items in order, so every wait ends.
  std::vector<int4> conv, zeros;
  for (int q = 0; q < p.Q; ++q)
    for (int b = 0; b < p.B; ++b) {
      for (int j = 0; j < lower_tiles(p, q); ++j) conv.push_back(make_int4(kConvItem, b, q, j));
      for (int j = 0; j < zero_chunks(p, q); ++j) zeros.push_back(make_int4(kZeroItem, b, q, j));
    }
  // v81: the last `held` zero chunks (a quarter of the window, at most half of them) are kept
  // for the end, after the last conv tile: the item timeline showed ~4 us of idle slots in the
  // last wave (17-29% busy), and a zero chunk waits for nothing, so blocks that finish early
  // take those instead of idling while the last tiles run (an eighth of the window: seq 1024
  // -2.5%, 2048 -1.4%; a quarter: -3.3%, -2.0%, 4096 -1.1%; JOURNAL.md v81).
  // tiles: the merged order; band_start[q]: where band q's first conv tile is in it (every band
  // has one: the diagonal).
  std::vector<int4> tiles;
  tiles.reserve(conv.size() + zeros.size());
  std::vector<std::size_t> band_start(static_cast<std::size_t>(p.Q) + 1);
  const std::size_t held = std::min(zeros.size() / 2, static_cast<std::size_t>(std::max(window, 4) / 4));
  const std::size_t spread = zeros.size() - held;
  std::size_t z = 0;
  for (std::size_t c = 0; c < conv.size(); ++c) {
    while (z < spread && z * conv.size() <= c * spread) tiles.push_back(zeros[z++]);
    if (conv[c].w == 0 && conv[c].y == 0) band_start[static_cast<std::size_t>(conv[c].z)] = tiles.size();
    tiles.push_back(conv[c]);
  }
  while (z < zeros.size()) tiles.push_back(zeros[z++]);
  band_start[static_cast<std::size_t>(p.Q)] = tiles.size();
  const long long lead = static_cast<long long>(lead_windows) * std::max(window, 1);
  int next_stats = 0;  // next band whose statistics are still to be placed
  auto place_stats_until = [&](long long position) {
    // Bands whose first consumer (band t-1's first tile) starts within `lead` of position.
    while (next_stats < p.Q &&
           static_cast<long long>(band_start[static_cast<std::size_t>(std::max(next_stats - 1, 0))]) - lead <= position) {
      for (int b = 0; b < p.B; ++b)
        for (int j = 0; j < stats_chunks(p, next_stats); ++j)
          plan.items.push_back(make_int4(kStatsItem, b, next_stats, j));
      ++next_stats;
    }
  };
  for (std::size_t k = 0; k < tiles.size(); ++k) {
    if (!p.local_stats && !p.prestats) place_stats_until(static_cast<long long>(k));
    plan.items.push_back(tiles[k]);
  }
  p.n_items = static_cast<int>(plan.items.size());
  // v83: the last wave's tickets (the last `window` items) are taken when an item ends, by
  // whichever block is free first, not ahead by blocks still busy (fused_kernel.cuh): seq 1024
  // -4.0..-4.7%, 2048-8192 -0.9..-1.7% (JOURNAL.md v83). Not with the statistics kernel (no item
  // waits on another; the late ticket's round trip cost fp32 seq 1024 +1.3..+1.6% and heads
  // 8/12 at seq 777 +1.0..+1.2%) nor with a single wave (seq 512: +4.6..+5.9%, the cause not
  // established), two calls each. v85: but a single wave with the statistics kernel takes every
  // ticket late (none during an item): no item waits there, and with tickets taken ahead the
  // blocks that started first held two items while later ones found none (seq 512 with v84's
  // statistics kernel: 24.1 us ahead, 20.35 us late).
  if (p.n_items <= window)
    p.early_tickets = p.prestats ? 0 : p.n_items;
  else
    p.early_tickets = p.prestats ? p.n_items : p.n_items - window;
  p.nch_max = p.local_stats || p.prestats ? 0 : stats_chunks(p, p.Q - 1) * (p.CS / p.SEG);
  plan.partials_bytes = p.local_stats || p.prestats ? 0 : static_cast<std::size_t>(p.B) * p.S * p.C * p.nch_max * 8;
  plan.stats_bytes = p.local_stats ? 0 : static_cast<std::size_t>(p.B) * p.C * p.S * 8;
  plan.counter_words = static_cast<std::size_t>(2) * p.B * p.Q + 2;
  return plan;
}

}  // namespace

FusedPlan make_plan(const Workload& w, int smem_optin, int window, int lead_windows, bool wgmma_ok) {
  // v72: where the plan with bands of kRows takes the interleave path (1-4 heads out on tensor
  // cores), its instance runs 128-thread blocks over bands of kFewRows rows: planned again with
  // those where the halo (r rows each side) stays within the neighbouring bands (a band needs at
  // least 2r rows), else (k 11) the ldmatrix path with kRows. The path is otherwise the one
  // kRows picks (the smaller tile would let the interleave path take some many-channel shapes
  // from the ldmatrix path, at one block an SM).
  FusedPlan plan = plan_with_rows(w, smem_optin, window, lead_windows, wgmma_ok, kRows, false);
  const auto interleave = [](const FusedPlan& pl) { return pl.why_not.empty() && pl.mma && !pl.p.ldsm && !pl.p.wgmma; };
  if (!interleave(plan)) return plan;
  if (2 * w.r() <= kFewRows) {
    FusedPlan few = plan_with_rows(w, smem_optin, window, lead_windows, wgmma_ok, kFewRows, false);
    if (interleave(few)) return few;
  }
  return plan_with_rows(w, smem_optin, window, lead_windows, wgmma_ok, kRows, true);
}

}  // namespace mtabench::fused

namespace mtabench::fused {

SmallPlan make_small_plan(const Workload& w, int smem_optin, int sm_count) {
  SmallPlan plan;
  SmallParams& p = plan.p;
  const long long macs = static_cast<long long>(w.heads_in) * w.k * w.k * w.heads_out;
  if (w.seq > kSmallMaxSeq) {
    plan.why_not = fmt::format("seq {} > {}", w.seq, kSmallMaxSeq);
    return plan;
  }
  if (macs > kSmallMaxMacs) {
    plan.why_not = fmt::format("{} multiply-adds per position > {} (the tensor-core path is faster)", macs, kSmallMaxMacs);
    return plan;
  }
  if (w.batch * w.seq > (1ll << 30)) {
    plan.why_not = "batch x seq over 2^30 blocks";
    return plan;
  }
  p.S = static_cast<int>(w.seq);
  p.B = static_cast<int>(w.batch);
  p.C = static_cast<int>(w.heads_in);
  p.O = static_cast<int>(w.heads_out);
  p.K = w.k;
  p.r = w.r();
  p.O4 = (p.O + 3) / 4 * 4;
  p.SP = p.S + 2 * p.r;
  plan.KT = p.K == 3 ? 3 : 0;
  auto layout = [&](int rb) {
    p.RB = rb;
    int off = 0;
    p.sm_w = off;
    off += align16(p.O4 * p.C * p.K * p.K * 4);
    p.sm_bias = off;
    off += align16(p.O4 * 4);
    p.sm_p = off;
    off += align16(p.C * (rb + 2 * p.r) * p.SP * 4);
    p.sm_total = off;
    return off <= smem_optin;
  };
  // Rows per block: doubled while there are still two blocks per SM, so small problems spread
  // over the whole GPU (the seed: 64 blocks of one row) and larger ones share their halo rows.
  int rb = 1;
  while (rb < 16 && 2 * rb <= p.S && p.B * ceil_div(p.S, 2 * rb) >= 2ll * sm_count) rb *= 2;
  while (rb > 1 && !layout(rb)) rb /= 2;
  if (!layout(rb)) {
    plan.why_not = fmt::format("{} bytes of shared memory for one row > {}", p.sm_total, smem_optin);
    return plan;
  }
  plan.grid = static_cast<int>(p.B * ceil_div(p.S, rb));
  // v16: the row loads take only the columns seq has (v3-v15 issued 8 per lane, predicated, for
  // every seq), and the convolution's positions x head groups are split further by channel
  // groups until they fill the block (v3-v15: one thread per position; at the seed one warp
  // did all 32 positions while seven waited).
  p.NCOL = 1;
  while (32 * p.NCOL < p.S) p.NCOL *= 2;
  const int tasks = rb * p.S * (p.O4 / 4);
  p.G = 1;
  while (2 * p.G <= std::min(8, p.C) && 2 * p.G * tasks <= kSmallThreads) p.G *= 2;
  p.QB = static_cast<int>(ceil_div(p.S, rb));
  p.qb_magic = small_magic(p.QB);
  p.halo_magic = small_magic(rb + 2 * p.r);
  p.pos_magic = small_magic(rb * p.S);
  p.s_magic = small_magic(p.S);
  p.ckk_magic = small_magic(p.C * p.K * p.K);
  // v164: where the plan gives one row a block (the problem spreads over the GPU anyway), the
  // shapes a block of a warp a channel holds take the row kernel. Its shared memory: each warp's
  // weights ([c][u][v][o4]), the bias, the channels' partial sums (float [O4][c][32 NCOL]): at
  // most 35 KB (seq 128, 8 channels, 8 heads out), kept to the opt-in all the same.
  const int row_sm_bias = align16(p.C * 9 * p.O4 * 4), row_sm_p = row_sm_bias + align16(p.O4 * 4);
  const int row_sm_total = row_sm_p + p.O4 * p.C * 32 * p.NCOL * 4;
  if (rb == 1 && p.S <= kRowMaxSeq && p.K == 3 && p.C <= kRowMaxC && p.O <= kRowMaxO && row_sm_total <= smem_optin) {
    plan.row = true;
    plan.threads = 32 * p.C;
    p.sm_w = 0;
    p.sm_bias = row_sm_bias;
    p.sm_p = row_sm_p;
    p.sm_total = row_sm_total;
  }
  return plan;
}

// Rows of a multiple of 8 scores from a 16-byte aligned base are all 16-byte aligned; the lean
// fold decodes its rows in 32 bits and reaches kPrestatsAlignedMaxRow columns. Other rows start
// m < 8 scores into a 16-byte line: the lined fold reads from there, m + seq columns, and the
// last row's last line ends inside the tensor only where its B C S S scores fill whole lines
// (the line before a row's first score belongs to the row before it).
PrestatsFold prestats_fold(const FusedParams& p) {
  const bool lean = (reinterpret_cast<std::uintptr_t>(p.scores) & 15) == 0 &&
                    static_cast<long long>(p.B) * p.C * p.S < (1ll << 31);
  // v138: rows longer than the lean folds reach (the warp-specialised kernel's statistics, any
  // seq) by the streaming fold (fused_prestats_stream.cuh) where they are 16-byte aligned; the
  // generic fold otherwise (an unaligned base or B C S >= 2^31: no harness input). v132's wide
  // fold, which v139 left only that case, is gone.
  if (p.S > kPrestatsAlignedMaxRow) return lean && p.S % 8 == 0 ? PrestatsFold::stream : PrestatsFold::generic;
  if (!lean) return PrestatsFold::generic;
  if (p.S % 8 == 0 && p.S <= kPrestatsAlignedMaxRow) return PrestatsFold::aligned;
  if (p.S % 8 != 0 && p.S + 7 <= kPrestatsAlignedMaxRow && static_cast<long long>(p.B) * p.C * p.S * p.S % 8 == 0)
    return PrestatsFold::lined;
  return PrestatsFold::generic;
}

}  // namespace mtabench::fused
