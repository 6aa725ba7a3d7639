#include "impls/fused/fused_plan.h"

#include <fmt/core.h>

#include <vector_functions.h>

#include <algorithm>

namespace mtabench::fused {

namespace {
constexpr int kRows = 16;            // R: rows per band; >= 2r for every k <= 11, so a band's
                                     // halo needs only the neighbouring bands' statistics
constexpr int kZeroCols = 2048;      // columns per zero item
constexpr int kLookahead = 2;        // bands by which statistics run ahead of convolution
constexpr int kLocalMaxSeq = 256;    // up to here a block computes its own rows' statistics
constexpr int kMaxWeightSmem = 112 * 1024;
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
  return fmt::format("{} R={} TJ={} CS={} Q={} items={} local_stats={} Cp={} NT={} ksteps={} w_in_smem={} smem={}B",
                     mma ? "mma" : "fma", p.R, p.TJ, p.CS, p.Q, items.size(), p.local_stats, p.Cp, p.NT, p.ksteps,
                     p.w_in_smem, p.sm_total);
}

FusedPlan make_plan(const Workload& w, int smem_optin) {
  FusedPlan plan;
  FusedParams& p = plan.p;
  plan.mma = w.dtype != DType::fp32;
  p.S = w.seq;
  p.B = static_cast<int>(w.batch);
  p.C = static_cast<int>(w.heads_in);
  p.O = static_cast<int>(w.heads_out);
  p.K = w.k;
  p.r = w.r();
  p.R = kRows;
  p.Cp = p.C + (p.C & 1);
  // Wider tiles amortise the 2r-column halo; with many channels the probability tile grows as
  // TJ * Cp, so it narrows to stay in shared memory.
  p.TJ = !plan.mma ? 128 : (p.Cp <= 8 ? 128 : (p.Cp <= 16 ? 64 : 32));
  p.PW = p.TJ + 2 * p.r;
  // 32-bit words per probability-tile column: Cp/2, plus 4 when that is a multiple of 8, so the
  // 8 columns a warp's A-fragment load touches fall in different banks.
  p.pitch_w = p.Cp / 2 + ((p.Cp / 2) % 8 == 0 ? 4 : 0);
  p.NT = (p.O + 7) / 8;
  p.Kreal = p.K * p.K * p.Cp;
  p.ksteps = (p.Kreal + 15) / 16;
  plan.WN = p.NT == 1 ? 1 : (p.NT == 2 ? 2 : 4);
  plan.KT = (!plan.mma && (p.K == 3 || p.K == 5 || p.K == 7)) ? p.K : 0;
  // About 32K scores per stats item whatever the channel count.
  int cs = 1024;
  while (cs > 64 && static_cast<long long>(cs) * p.R * p.C > 32768) cs /= 2;
  p.CS = cs;
  p.ZC = kZeroCols;
  p.Q = static_cast<int>(ceil_div(p.S, p.R));
  p.local_stats = p.S <= kLocalMaxSeq ? 1 : 0;

  const int halo_rows = p.R + 2 * p.r;
  const std::size_t elem = dtype_size(w.dtype);
  auto layout = [&](bool w_smem) {
    int off = 0;
    p.sm_w = off;
    if (plan.mma) off += w_smem ? align16(p.ksteps * p.NT * 32 * 8) : 0;
    else off += align16(((p.O + 3) / 4 * 4) * p.C * p.K * p.K * 4);
    p.sm_bias = off;
    off += align16(((p.O + 7) / 8 * 8) * 4);
    p.sm_koff = off;
    off += plan.mma ? align16(p.ksteps * 8 * 4) : 0;
    p.sm_stats = off;
    off += align16(halo_rows * p.C * 8);
    p.sm_p = off;
    if (plan.mma) off += align16(halo_rows * p.PW * p.pitch_w * 4);
    else off += align16(p.C * halo_rows * ((p.PW + 3) / 4 * 4) * 4);
    p.sm_y = off;
    if (plan.mma) off += align16(p.O * p.R * (p.TJ + 8) * static_cast<int>(elem));
    p.sm_total = off;
  };
  p.w_in_smem = plan.mma && p.ksteps * p.NT * 32 * 8 <= kMaxWeightSmem ? 1 : 0;
  layout(p.w_in_smem != 0);
  if (p.sm_total > smem_optin && p.w_in_smem) {
    p.w_in_smem = 0;
    layout(false);
  }
  if (p.sm_total > smem_optin)
    plan.why_not = fmt::format("needs {} bytes of shared memory per block (k {}, heads {}/{}), the device allows {}",
                               p.sm_total, p.K, p.C, p.O, smem_optin);

  // Work order. Statistics of band t are produced while the convolution of band t - kLookahead
  // is consumed, so every item waits only on items earlier in the order (blocks take items
  // strictly in order, so the wait always ends) and the rows a tile re-reads are still in L2.
  // Batches interleave so that bands of all batches progress together.
  auto push = [&](int type, int b, int q, int j) { plan.items.push_back(make_int4(type, b, q, j)); };
  for (int t = 0; t < p.Q + (p.local_stats ? 0 : kLookahead); ++t) {
    for (int b = 0; b < p.B; ++b) {
      if (!p.local_stats && t < p.Q)
        for (int j = 0; j < stats_chunks(p, t); ++j) push(kStatsItem, b, t, j);
      const int q = p.local_stats ? t : t - kLookahead;
      if (q < 0 || q >= p.Q) continue;
      for (int j = 0; j < lower_tiles(p, q); ++j) push(kConvItem, b, q, j);
      for (int j = 0; j < zero_chunks(p, q); ++j) push(kZeroItem, b, q, j);
    }
  }
  p.n_items = static_cast<int>(plan.items.size());
  p.nch_max = p.local_stats ? 0 : stats_chunks(p, p.Q - 1);
  plan.partials_bytes = p.local_stats ? 0 : static_cast<std::size_t>(p.B) * p.S * p.C * p.nch_max * 8;
  plan.stats_bytes = p.local_stats ? 0 : static_cast<std::size_t>(p.B) * p.C * p.S * 8;
  plan.counter_words = static_cast<std::size_t>(2) * p.B * p.Q + 2;
  return plan;
}

}  // namespace mtabench::fused
