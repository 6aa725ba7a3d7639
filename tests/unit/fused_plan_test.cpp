// The fused kernel's work plan, checked on the host: the items cover every output column of
// every band exactly once, statistics come in full sets, and every item that waits comes after
// everything it waits for (the kernel's deadlock freedom rests on that order).
#include "harness/dtype.h"
#include "harness/workload.h"
#include "impls/fused/fused_contraction.h"
#include "impls/fused/fused_plan.h"
#include "tests/test_workload.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace mtabench::fused {
namespace {

// The shared test workload builder, under this file's short name.
constexpr auto shape = &testing::make_workload;

void check_plan(const Workload& w, bool wgmma_ok = false) {
  SCOPED_TRACE(w.shape_string() + (wgmma_ok ? " (wgmma allowed)" : ""));
  const FusedPlan plan = make_plan(w, 227 * 1024, kPlanWindow, kLeadWindows, wgmma_ok);
  ASSERT_TRUE(plan.why_not.empty()) << plan.why_not;
  const FusedParams& p = plan.p;
  ASSERT_EQ(p.n_items, static_cast<int>(plan.items.size()));
  // stats_item splits a segment into 8-value vectors over at most SEG / (8 NV) lanes (a power of
  // two), batches of NV <= 8 vectors per lane, and a chunk into CS / SEG segments: so SEG is a
  // power of two >= 64 dividing CS.
  EXPECT_GE(p.SEG, 64);
  EXPECT_EQ(p.SEG & (p.SEG - 1), 0);
  EXPECT_EQ(p.CS % p.SEG, 0);
  EXPECT_EQ((p.CS / p.SEG) & (p.CS / p.SEG - 1), 0);
  if (!plan.mma) {
    // fused_fma.cuh: 16 groups of 8 columns a row, and v99's one-column copies, five a lane (160),
    // of which only the fifth may lie past PW.
    EXPECT_EQ(p.TJ, 128);
    EXPECT_GE(p.PW, 128);
    EXPECT_LE(p.PW, 5 * 32);
    // v100: tile column t at shared column t + shift, so that global column j0 - r + t (j0 a
    // multiple of TJ) and its shared column agree mod 4 (16-byte copies), in rows of whole
    // 16-byte chunks, all of them inside the tile's space.
    const int sh = fp32_shift(p.r), pitch = fp32_pitch(p);
    EXPECT_GE(sh, 0);
    EXPECT_LT(sh, 4);
    EXPECT_EQ((sh + p.r) % 4, 0);
    EXPECT_EQ(p.TJ % 4, 0);
    EXPECT_EQ(pitch % 4, 0);
    EXPECT_GE(pitch, sh + p.PW);
    EXPECT_LT(pitch, sh + p.PW + 4);
    EXPECT_LE(p.sm_p + p.CG * (p.R + 2 * p.r) * pitch * 4, p.sm_total);
    EXPECT_EQ(p.sm_p % 16, 0);
  }
  if (p.fill4) {
    // The four-channel tile's ldmatrix chunks (v7): 16-byte aligned (window rows start at an
    // even column), covering the window (one more column when r is odd), inside the tile.
    // (fill4_a_row: the tile column where position 0's and the last position's window rows start.)
    EXPECT_EQ(fill4_a_row(p, 0, 0) % 2, 0);
    EXPECT_EQ(p.PW % 2, 0);
    EXPECT_GE(2 * p.NPAIR, p.KW + (p.r & 1));
    EXPECT_LE(fill4_a_row(p, 0, p.TJ / p.H - 1) + 2 * p.NPAIR, p.PW);
    EXPECT_EQ(p.NCH, p.K * p.NPAIR);
    EXPECT_EQ(p.ksteps, (p.NCH + 1) / 2);
  }
  if (p.wgmma) {
    // fused_wgmma.cuh: one m64 tile per row; a k-step is two 8-channel chunks at one tap; the
    // chunk stride (the A descriptor's leading byte offset) is 16 bytes past a multiple of 128
    // (conflict-free fill stores) and, like every shared-memory address, fits a descriptor's
    // 14-bit field of 16-byte units.
    EXPECT_TRUE(wgmma_ok);
    EXPECT_EQ(p.ldsm, 1);
    EXPECT_EQ(p.TJ, 64);
    EXPECT_EQ(p.Cp % 16, 0);
    EXPECT_EQ(2 * p.ksteps, p.NCH);
    EXPECT_EQ(p.cstride % 128, 16);
    EXPECT_GE(p.cstride, (p.R + 2 * p.r) * p.PW * 16);
    EXPECT_LE(p.sm_p + p.Cp / 8 * p.cstride, p.sm_total);
    EXPECT_GE(p.sm_bias, p.sm_w + p.ksteps * p.NT * 256);
    EXPECT_LT(p.sm_total, 16384 * 16);
    if (p.ws) {
      // v41: the warp-specialised kernel pipelines the tile's chunk pairs (two to
      // kWsMaxPairs = 4) and stores y from the accumulators (the tile is the next item's).
      EXPECT_EQ(p.wgmma_rs, 1);
      EXPECT_EQ(p.NT, 4);
      EXPECT_GE(p.Cp / 16, 2);
      EXPECT_LE(p.Cp / 16, 4);
      EXPECT_EQ(p.S % 8, 0);
      EXPECT_EQ(p.local_stats, 0);
      EXPECT_EQ(p.threads, 512);  // v151
      EXPECT_EQ(p.yhp, 0);
      // v45: the consumers' y staging, a space of its own after the tile (which is the next
      // item's while they store), 16-byte aligned for stmatrix and the chunk loads.
      EXPECT_GE(p.sm_y, p.sm_p + (p.Cp / 8) * p.cstride);
      EXPECT_EQ(p.sm_y % 16, 0);
      EXPECT_LE(p.sm_y + kWsStageBytes, p.sm_total);
    } else if (p.wgmma_rs) {
      EXPECT_EQ(p.threads, 256);
      // v29: the outputs staged in the tile's space, in store_staging's layout (16-byte rows).
      EXPECT_EQ(p.R, kWgmmaRows);
      EXPECT_EQ(p.yhp, kWgmmaYhp);
      EXPECT_EQ(p.sm_y, p.sm_p);
      EXPECT_EQ(p.sm_y % 16, 0);
      EXPECT_LE(p.sm_y + static_cast<long long>(p.O) * p.yhp * static_cast<int>(dtype_size(w.dtype)), p.sm_total);
    } else {
      EXPECT_EQ(p.yhp, 0);
    }
  }
  if (plan.mma && !p.ldsm) {
    // The interleave's staging tile: a head 8 banks (mod 32) from the next, so the four t lanes
    // of a 32-bit store fall in different banks (v7).
    EXPECT_EQ((p.yhp / 2) % 32, 8);
  }
  // v82: the statistics kernel ahead of the main one up to kPrestatsMaxSeq (v85r: the few-heads
  // tensor-core instance up to kPrestatsFewHeadsMaxSeq), where the statistics are shared (not
  // local) and the kernel is not the warp-specialised one; then no partials are needed (the
  // stats items' only).
  const long long prestats_max = plan.mma && !p.ldsm ? kPrestatsFewHeadsMaxSeq : kPrestatsMaxSeq;
  EXPECT_EQ(p.prestats, !p.local_stats && (p.ws || p.S <= prestats_max) ? 1 : 0);
  if (p.prestats) EXPECT_EQ(plan.partials_bytes, 0u);
  // Columns covered per (b, band): conv tiles and zero chunks, exactly once.
  std::map<std::pair<int, int>, std::vector<int>> cover;
  std::map<std::pair<int, int>, std::set<int>> stats_seen;
  std::map<std::pair<int, int>, int> stats_done_at;  // index of the band's last stats item
  for (int n = 0; n < p.n_items; ++n) {
    const int4 it = plan.items[n];
    ASSERT_GE(it.y, 0);
    ASSERT_LT(it.y, p.B);
    ASSERT_GE(it.z, 0);
    ASSERT_LT(it.z, p.Q);
    auto& cols = cover[{it.y, it.z}];
    if (cols.empty()) cols.assign(static_cast<std::size_t>(p.S), 0);
    if (it.x == kStatsItem) {
      ASSERT_FALSE(p.local_stats);
      ASSERT_FALSE(p.prestats) << "stats item " << n << " in a plan whose statistics come from their own kernel";
      EXPECT_TRUE((stats_seen[{it.y, it.z}].insert(it.w).second)) << "duplicate stats chunk";
      stats_done_at[{it.y, it.z}] = n;
    } else if (it.x == kConvItem) {
      for (long long j = static_cast<long long>(it.w) * p.TJ; j < std::min<long long>((it.w + 1ll) * p.TJ, p.S); ++j)
        ++cols[static_cast<std::size_t>(j)];
      if (!p.local_stats && !p.prestats)
        for (int dq = -1; dq <= 1; ++dq) {
          const int q = it.z + dq;
          if (q < 0 || q >= p.Q || (dq != 0 && p.r == 0)) continue;
          ASSERT_TRUE(stats_done_at.count({it.y, q})) << "conv item " << n << " precedes the stats of band " << q;
          EXPECT_EQ(static_cast<int>(stats_seen[{it.y, q}].size()), stats_chunks(p, q))
              << "conv item " << n << " precedes part of band " << q << "'s statistics";
        }
    } else {
      ASSERT_EQ(it.x, kZeroItem);
      const long long c0 = static_cast<long long>(lower_tiles(p, it.z)) * p.TJ + static_cast<long long>(it.w) * p.ZC;
      for (long long j = c0; j < std::min<long long>(c0 + p.ZC, p.S); ++j) ++cols[static_cast<std::size_t>(j)];
    }
  }
  for (int b = 0; b < p.B; ++b)
    for (int q = 0; q < p.Q; ++q) {
      const auto& cols = cover[{b, q}];
      ASSERT_EQ(static_cast<long long>(cols.size()), p.S);
      for (long long j = 0; j < p.S; ++j) ASSERT_EQ(cols[static_cast<std::size_t>(j)], 1) << "b " << b << " band " << q << " column " << j;
      if (!p.local_stats && !p.prestats) EXPECT_EQ(static_cast<int>(stats_seen[{b, q}].size()), stats_chunks(p, q));
    }
}

TEST(FusedPlan, ShippedShapes) {
  check_plan(shape(3, 32, 2, 4, 4, DType::bf16));
  check_plan(shape(3, 4096, 2, 4, 4, DType::bf16));
  check_plan(shape(3, 4096, 2, 4, 4, DType::fp32));
  check_plan(shape(5, 2048, 4, 16, 16, DType::bf16));
  check_plan(shape(5, 2048, 4, 16, 16, DType::bf16), true);
  check_plan(shape(7, 4096, 1, 32, 32, DType::bf16));
  check_plan(shape(7, 4096, 1, 32, 32, DType::bf16), true);
  check_plan(shape(5, 777, 3, 8, 12, DType::fp16));
}

// Which statistics each size takes: local up to seq 256 whatever the channel count, shared above
// (v38: seq 257-512 with at most four channels too, local since v6a).
TEST(FusedPlan, LocalStatisticsUpToTheirBounds) {
  const int optin = 227 * 1024;
  EXPECT_TRUE(make_plan(shape(3, 256, 1, 8, 8, DType::bf16), optin).p.local_stats);
  EXPECT_TRUE(make_plan(shape(3, 256, 2, 4, 4, DType::fp32), optin).p.local_stats);
  EXPECT_FALSE(make_plan(shape(3, 257, 1, 8, 8, DType::bf16), optin).p.local_stats);
  EXPECT_FALSE(make_plan(shape(3, 257, 2, 4, 4, DType::bf16), optin).p.local_stats);
  EXPECT_FALSE(make_plan(shape(3, 512, 2, 4, 4, DType::bf16), optin).p.local_stats);
  EXPECT_FALSE(make_plan(shape(3, 500, 2, 3, 2, DType::fp32), optin).p.local_stats);
  EXPECT_FALSE(make_plan(shape(3, 512, 2, 5, 4, DType::bf16), optin).p.local_stats);
}

// The fp32 path keeps its weights in shared memory as [head group][c][u][v][4 heads] (v94) while
// they fit, else reads them from global memory as [o][c][u][v]: FusedGpu.Fp32PathCorners runs
// these shapes, so each form stays covered.
TEST(FusedPlan, Fp32WeightsInSharedMemoryUntilTheyDoNotFit) {
  const int optin = 227 * 1024;
  EXPECT_EQ(make_plan(shape(3, 4096, 2, 4, 4, DType::fp32), optin).p.w_global, 0);
  EXPECT_EQ(make_plan(shape(3, 300, 1, 4, 6, DType::fp32), optin).p.w_global, 0);
  const FusedPlan grouped = make_plan(shape(3, 1031, 1, 9, 4, DType::fp32), optin);
  EXPECT_EQ(grouped.p.w_global, 0);
  EXPECT_GT(grouped.p.C, grouped.p.CG);  // a tile per channel group
  EXPECT_EQ(make_plan(shape(11, 40, 1, 32, 32, DType::fp32), optin).p.w_global, 1);
  // Global weights take the general instance (KT 0), the only one with that loop (v94b).
  const FusedPlan global7 = make_plan(shape(7, 40, 1, 40, 40, DType::fp32), optin);
  EXPECT_EQ(global7.p.w_global, 1);
  EXPECT_EQ(global7.KT, 0);
  EXPECT_EQ(make_plan(shape(7, 40, 1, 4, 4, DType::fp32), optin).KT, 7);
}

TEST(FusedPlan, RandomShapes) {
  std::mt19937 rng(7);
  const long long seqs[] = {1, 2, 3, 17, 255, 256, 257, 300, 521, 1000, 2053};
  for (int n = 0; n < 60; ++n) {
    const int k = 1 + 2 * static_cast<int>(rng() % 6);
    check_plan(shape(k, seqs[rng() % 11], 1 + rng() % 3, 1 + rng() % 64, 1 + rng() % 64,
                     static_cast<DType>(rng() % 3)),
               n % 2 == 1);
  }
}

TEST(FusedPlan, MmaLayoutAvoidsBankConflictsAndPadsTheContraction) {
  const FusedPlan a = make_plan(shape(7, 4096, 1, 32, 32, DType::bf16), 227 * 1024);
  EXPECT_TRUE(a.mma);
  EXPECT_EQ(a.p.Cp, 32);
  EXPECT_EQ(a.p.pitch_w, 20);  // 16 words + 4: eight columns land in eight bank groups
  EXPECT_EQ(a.p.Kreal, 49 * 32);
  EXPECT_EQ(a.p.ksteps, 98);
  EXPECT_EQ(a.p.NT, 4);
  EXPECT_EQ(a.p.H, 1);
  EXPECT_EQ(a.p.ldsm, 1);
  EXPECT_EQ(a.p.NCH, 49 * 4);  // 8-channel chunks: two per k-step
  EXPECT_EQ(a.p.TJ, 32);       // 4 m-tiles x 4 n-tiles per warp, 8 warps over 16 rows x 2 m-tiles
  EXPECT_EQ(a.p.sm_y, a.p.sm_p);  // the staging tile overlays the probability tile
  EXPECT_EQ(a.p.yhp % 8, 0);      // 16-byte rows in the staging tile
  const FusedPlan d = make_plan(shape(5, 777, 3, 12, 8, DType::fp16), 227 * 1024);
  EXPECT_EQ(d.p.Cp, 16);  // 12 channels pad to two chunks of 8
  EXPECT_EQ(d.p.ksteps, 25);
  EXPECT_EQ(d.p.pitch_w, 12);  // 48 bytes: three 16-byte units
  const FusedPlan b = make_plan(shape(3, 100, 1, 5, 3, DType::fp16), 227 * 1024);
  EXPECT_EQ(b.p.Cp, 6);  // odd channel counts pad to even: channel pairs are 32-bit words
  EXPECT_EQ(b.p.H, 2);   // 3 heads: n-columns are (head, column offset 0 or 1)
  EXPECT_EQ(b.p.KW, 4);  // the k = 3 window widened by H - 1
  EXPECT_EQ(b.p.ksteps, (3 * 4 * 6 + 15) / 16);
  EXPECT_EQ(b.p.NT, 1);
  EXPECT_EQ(b.p.TJ, 128);
  EXPECT_EQ(b.p.ldsm, 0);
  const FusedPlan c = make_plan(shape(3, 100, 1, 4, 20, DType::bf16), 227 * 1024);
  EXPECT_EQ(c.p.NT, 4);  // 20 heads: 3 n-tiles, rounded up to the kernel's 4
  // The four-channel tile (v7): k 3 (r odd) reads window rows from one column early, five
  // columns rounded up to three 16-byte chunks per row, nine chunks in five k-steps.
  const FusedPlan e = make_plan(shape(3, 4096, 2, 4, 4, DType::bf16), 227 * 1024);
  EXPECT_EQ(e.p.fill4, 1);
  EXPECT_EQ(e.p.H, 2);
  EXPECT_EQ(e.p.col0, 7);
  EXPECT_EQ(e.p.NPAIR, 3);
  EXPECT_EQ(e.p.NCH, 9);
  EXPECT_EQ(e.p.ksteps, 5);
  EXPECT_EQ(e.p.TJ, 128);  // 8 m-tiles per warp
  const FusedPlan f = make_plan(shape(5, 4096, 1, 4, 4, DType::bf16), 227 * 1024);
  EXPECT_EQ(f.p.NPAIR, 3);  // r even: the six window columns from col0, three chunks
  EXPECT_EQ(f.p.ksteps, 8);
}

// fn(p) for each bf16 plan (batch 2) of k x heads_in x heads_out x seq that takes the
// four-channel tile, under a trace of its shape; returns how many there were.
template <class Fn>
int for_each_fill4_plan(std::initializer_list<int> ks, std::initializer_list<int> cis, std::initializer_list<int> cos,
                        std::initializer_list<int> seqs, Fn&& fn) {
  int n = 0;
  for (int k : ks)
    for (int ci : cis)
      for (int co : cos)
        for (int seq : seqs) {
          const Workload w = shape(k, seq, 2, ci, co, DType::bf16);
          SCOPED_TRACE(w.shape_string());
          const FusedPlan plan = make_plan(w, 227 * 1024);
          EXPECT_TRUE(plan.why_not.empty()) << plan.why_not;
          if (!plan.why_not.empty() || !plan.p.fill4) continue;
          ++n;
          fn(plan.p);
        }
  return n;
}

// v18: the four-channel fill's tasks (fill4_task, its division a multiply-high since v21b) are
// every (halo row, vector) of the tile once, row-major (adjacent lanes read adjacent 16 bytes of
// a score row), and each task's four 16-byte stores write its four chunks. A warp's 16-byte
// shared-memory access is served a quarter-warp (8 lanes) at a time, one wavefront per distinct
// address in a bank group: with the chunks in order (v14) a quarter takes 4; with
// fill4_chunk_xor at most 2 (where a quarter wraps to the next row) and at most 1.35x the least
// over the tile (Nsight Compute measured v14's stores at 16 wavefronts per warp store, and v17's
// conflict-free lane pairs at 4).
TEST(FusedPlan, Fill4StoresSpreadOverBanksPerQuarterWarp) {
  const int checked = for_each_fill4_plan({1, 3, 5, 7, 9, 11}, {3, 4}, {1, 2, 3, 4}, {520, 1000, 4096},
                                          [](const FusedParams& p) {
    const int rows = p.R + 2 * p.r, nv = p.TJ / 8 + 2, tasks = rows * nv;
    ASSERT_EQ(fill4_tasks(p), tasks);  // the kernel's task count
    std::set<std::pair<int, int>> seen;
    for (int task = 0; task < tasks; ++task) {
      const Fill4Slot at = fill4_task(p, task);
      ASSERT_EQ(at.pr, task / nv) << task;  // fill4_magic's multiply-high is the division
      ASSERT_TRUE(at.pr >= 0 && at.pr < rows && at.v >= 0 && at.v < nv) << task;
      EXPECT_TRUE(seen.insert({at.pr, at.v}).second) << "task " << task << " repeats a vector";
      if (task % nv != 0) EXPECT_EQ(fill4_task(p, task - 1).v + 1, at.v) << task;  // row-major
      std::set<int> chunks;
      for (int x = 0; x < 4; ++x) chunks.insert(x ^ fill4_chunk_xor(at.v));
      EXPECT_EQ(chunks, (std::set<int>{0, 1, 2, 3})) << task;
    }
    long long wavefronts = 0, least = 0;
    for (int q0 = 0; q0 < tasks; q0 += 8)
      for (int x = 0; x < 4; ++x) {
        int lanes_per_group[8] = {};
        for (int task = q0; task < std::min(q0 + 8, tasks); ++task) {
          const Fill4Slot at = fill4_task(p, task);
          ++lanes_per_group[(fill4_tile_byte(p, at.pr, at.v) + 16 * (x ^ fill4_chunk_xor(at.v))) / 16 % 8];
        }
        const int most = *std::max_element(lanes_per_group, lanes_per_group + 8);
        EXPECT_LE(most, 2) << "quarter-warp at task " << q0;
        wavefronts += most;
        ++least;
      }
    // Over the tile: at most 1.35x the least for the 128-column tile (18 vectors a row). The
    // narrow tiles of v38 (seq 520 batch 2: 64 columns, 10 vectors a row) wrap a row in most
    // quarter-warps, each still at most 2 (above): 1.6x, and the tile measured faster anyway.
    if (p.TJ == 128) EXPECT_LE(wavefronts * 20, least * 27);
    else EXPECT_LE(wavefronts, 2 * least);
  });
  EXPECT_EQ(checked, 120);  // k 11 (r 5: 16-row bands) takes the ldmatrix path since v72
}

// v59: the four-channel fill's second round is staged by cp.async in the y staging space: every
// task past the block's threads (one more a thread at most) where that space holds its 64
// bytes a task, none otherwise; the slots must stay inside the staging space, which the fill
// does not use.
TEST(FusedPlan, Fill4SecondRoundFitsTheStagingSpace) {
  int staged = 0, checked = 0;
  for (int k : {1, 3, 5, 7, 9, 11})
    for (int ci : {3, 4})
      for (int co : {1, 2, 3, 4})
        for (int seq : {520, 1000, 4096})
          for (DType dt : {DType::bf16, DType::fp16}) {
            const Workload w = shape(k, seq, 2, ci, co, dt);
            SCOPED_TRACE(w.shape_string());
            const FusedPlan plan = make_plan(w, 227 * 1024);
            ASSERT_TRUE(plan.why_not.empty()) << plan.why_not;
            const FusedParams& p = plan.p;
            if (!p.fill4) {
              EXPECT_EQ(p.fill4_stage, 0);
              continue;
            }
            ++checked;
            const int tail = std::min(fill4_tasks(p), 2 * p.threads) - p.threads;
            const long long staging = static_cast<long long>(p.O) * p.yhp * 2;
            if (p.fill4_stage == 0) {
              EXPECT_TRUE(tail <= 0 || tail * 64ll > staging) << "a second round that fits was not staged";
              continue;
            }
            ++staged;
            EXPECT_EQ(p.fill4_stage, tail);
            EXPECT_LE(p.fill4_stage * 64ll, staging);
            EXPECT_LE(p.sm_y + p.fill4_stage * 64, p.sm_total);
            EXPECT_EQ(p.sm_y % 16, 0);  // cp.async's 16-byte destinations
          }
  EXPECT_EQ(checked, 240);  // k 11 takes the ldmatrix path since v72
  EXPECT_GT(staged, 0);
  // The suite's few-heads workloads (k 3, heads 4/4, seq 4096): 10 halo rows x 18 vectors over
  // 128 threads (v72), 52 staged.
  const FusedPlan seq4096 = make_plan(shape(3, 4096, 2, 4, 4, DType::bf16), 227 * 1024);
  EXPECT_EQ(seq4096.p.threads, kFewThreads);
  EXPECT_EQ(seq4096.p.R, kFewRows);
  EXPECT_EQ(seq4096.p.fill4_stage, 52);
}

// What the four-channel fill writes is what the contraction reads (written in the thirty-third
// session with v108, which changed both; kept for v7's layout). The fill: task (pr, v)'s chunk x
// holds tile row pr, columns jg + 2x + {0, 1} (jg = 8v - 8 from j0). The contraction
// (mma_mtiles and setup_block, through fill4_a_row and fill4_koff): the ldmatrix row of position
// j (a multiple of H) and chunk e of k-step s, element (column e >> 2, channel e & 3) of it, must
// be window row u and window column v of what split_k names at that k index (v = column - (j -
// r)), in a chunk the fill wrote, wherever the weight there is not zero (v in [0, KW)).
TEST(FusedPlan, Fill4ContractionReadsWhatTheFillWrote) {
  const int checked = for_each_fill4_plan({1, 3, 5, 7, 9}, {4}, {1, 2, 4}, {520, 4096}, [](const FusedParams& p) {
    std::set<int> written;  // tile bytes of written chunks
    for (int task = 0; task < fill4_tasks(p); ++task) {
      const Fill4Slot at = fill4_task(p, task);
      for (int x = 0; x < 4; ++x) written.insert(fill4_tile_byte(p, at.pr, at.v) + 16 * x);
    }
    const int row_bytes = p.PW * 8;
    int bad = 0;
    for (int rho = 0; rho < p.R; ++rho)
      for (int j = 0; j < p.TJ; j += p.H)  // position j: A row j / H of an m-tile (mma_mtiles)
        for (int s = 0; s < p.ksteps; ++s)
          for (int half = 0; half < 2; ++half) {
            const int addr = fill4_a_row(p, rho, j / p.H) * 8 + fill4_koff(p, s * 2 + half);
            ASSERT_EQ(addr % 16, 0);
            for (int e = 0; e < 8; ++e) {
              const KIndex x = split_k(p, (s * 2 + half) * 8 + e);
              if (x.pad || x.v < 0 || x.v >= p.KW) continue;  // a zero weight
              const int row = addr / row_bytes, col = addr % row_bytes / 8 + (e >> 2) - 8;  // from j0
              if ((row != rho + x.u || col != j - p.r + x.v || x.c != (e & 3) ||
                   written.count(addr / 16 * 16) == 0) &&
                  ++bad <= 3)
                ADD_FAILURE() << "row " << rho << " position " << j << " k-step " << s << " chunk " << half
                              << " element " << e << ": tile row " << row << " column " << col << ", wanted "
                              << rho + x.u << ", " << j - p.r + x.v;
            }
          }
    EXPECT_EQ(bad, 0);
  });
  EXPECT_GE(checked, 20);
}

// v24: the eight-channel fill (fill8_task, ldmatrix and wgmma tiles) writes every chunk of the
// tile once (halo row, column, channel group), its tasks vectors-fastest (a quarter-warp's loads
// are 128 contiguous bytes of one channel's row); store y of a task writes column (y + rot) & 7
// (fill8_rot), so every store of a quarter-warp's 8 lanes hits 8 different 16-byte bank groups,
// also where the quarter wraps to the next row or channel group (unrotated, 8 adjacent vectors
// hit one group: 8 wavefronts).
TEST(FusedPlan, Fill8WritesEveryChunkOnceAndSpreadsItsStoresOverBanks) {
  int checked = 0;
  for (bool wg : {false, true})
    for (int k : {1, 3, 5, 7, 11})
      for (int ci : {1, 8, 12, 16, 32, 64})
        for (int co : {5, 8, 16, 32, 64}) {
          const Workload w = shape(k, 1024, 1, ci, co, DType::bf16);
          SCOPED_TRACE(w.shape_string() + (wg ? " (wgmma allowed)" : ""));
          const FusedPlan plan = make_plan(w, 227 * 1024, kPlanWindow, kLeadWindows, wg);
          if (!plan.why_not.empty()) continue;
          const FusedParams& p = plan.p;
          if (!p.ldsm) continue;  // fill8 serves the ldmatrix and wgmma tiles
          ++checked;
          const int rows = p.R + 2 * p.r, nv = p.TJ / 8 + 2, G = p.Cp / 8, tasks = rows * nv * G;
          ASSERT_EQ(fill8_tasks(p), tasks);
          const int col_bytes = 16 * fill8_col_units(p);
          EXPECT_EQ(col_bytes, p.wgmma ? 16 : p.pitch_w * 4);
          EXPECT_EQ(fill8_col_units(p) % 2, 1);  // an odd number of 16-byte units
          std::set<int> chunks;
          for (int task = 0; task < tasks; ++task) {
            const Fill8Slot at = fill8_task(p, task);
            ASSERT_TRUE(at.pr >= 0 && at.pr < rows && at.v >= 0 && at.v < nv && at.g >= 0 && at.g < G) << task;
            if (task % nv != 0) EXPECT_EQ(fill8_task(p, task - 1).v + 1, at.v) << task;  // vectors fastest
            const int rot = fill8_rot(p, task, at);
            ASSERT_TRUE(rot >= 0 && rot < 8);
            for (int y = 0; y < 8; ++y) {
              const int col = 8 * at.v + ((y + rot) & 7);
              const int byte = fill8_chunk_byte(p, at.pr, 8 * at.v, at.g) + ((y + rot) & 7) * col_bytes;
              EXPECT_EQ(byte, fill8_chunk_byte(p, at.pr, col, at.g)) << task;
              EXPECT_TRUE(chunks.insert(byte).second) << "task " << task << " store " << y << " writes a chunk twice";
              EXPECT_GE(byte, 0);
              EXPECT_LE(byte + 16, p.wgmma ? G * p.cstride : rows * p.PW * p.pitch_w * 4);
            }
          }
          EXPECT_EQ(static_cast<int>(chunks.size()), rows * p.PW * G);  // every chunk of the tile
          for (int q0 = 0; q0 < tasks; q0 += 8)
            for (int y = 0; y < 8; ++y) {
              int lanes_per_group[8] = {};
              for (int task = q0; task < std::min(q0 + 8, tasks); ++task) {
                const Fill8Slot at = fill8_task(p, task);
                const int byte = fill8_chunk_byte(p, at.pr, 8 * at.v + ((y + fill8_rot(p, task, at)) & 7), at.g);
                ++lanes_per_group[byte / 16 % 8];
              }
              EXPECT_EQ(*std::max_element(lanes_per_group, lanes_per_group + 8), 1) << "quarter-warp at task " << q0;
            }
        }
  EXPECT_GT(checked, 100);
}

// v38: with shared statistics the interleave path narrows its tile until it makes kPlanWindow
// conv items (or is one m-tile wide); local statistics and enough items keep the widest tile.
TEST(FusedPlan, SharedStatisticsTilesNarrowUntilAWindowOfItems) {
  auto plan = [](long long seq, int batch, int hin, int hout, int window = kPlanWindow) {
    return make_plan(shape(3, seq, batch, hin, hout, DType::bf16), 227 * 1024, window, kLeadWindows, true);
  };
  const auto conv_items = [](const FusedPlan& pl) {
    return std::count_if(pl.items.begin(), pl.items.end(), [](const int4& it) { return it.x == kConvItem; });
  };
  // v72: bands of 8 rows and 8 blocks an SM; v72t: the tile narrows until kFewPlanWindow conv
  // items (seq 512: 320 at 128 columns, 576 at 64; at 16 rows v38 took 64 columns, 288 items).
  const FusedPlan s512 = plan(512, 2, 4, 4);
  ASSERT_EQ(s512.p.local_stats, 0);
  ASSERT_EQ(s512.p.R, kFewRows);
  EXPECT_EQ(s512.p.TJ, 64);
  EXPECT_EQ(conv_items(s512), 576);
  EXPECT_EQ(plan(512, 2, 4, 4, 408).p.TJ, 64);  // the launch's second plan (its grid) agrees
  EXPECT_EQ(plan(512, 1, 4, 4).p.TJ, 32);       // batch 1: 288 conv items at 64 columns, 544 at 32
  EXPECT_EQ(plan(512, 4, 4, 4).p.TJ, 128);      // batch 4: 640 at 128
  EXPECT_EQ(plan(1024, 2, 4, 4).p.TJ, 128);
  EXPECT_EQ(plan(4096, 2, 4, 4).p.TJ, 128);
  EXPECT_EQ(plan(256, 1, 4, 4).p.local_stats, 1);
  EXPECT_EQ(plan(256, 1, 4, 4).p.TJ, 128);      // local statistics: never narrower
  for (long long seq : {257ll, 300ll, 400ll, 512ll, 777ll})
    for (int batch : {1, 2, 3, 16}) {
      const FusedPlan pl = plan(seq, batch, 4, 4);
      ASSERT_TRUE(pl.why_not.empty()) << pl.why_not;
      if (pl.p.local_stats || pl.p.ldsm) continue;
      SCOPED_TRACE(::testing::Message() << "seq " << seq << " batch " << batch);
      // The widest tile that makes a window of items: either it does, or it is the narrowest.
      const int window = pl.p.R == kFewRows ? kFewPlanWindow : kPlanWindow;
      EXPECT_TRUE(conv_items(pl) >= window || pl.p.TJ == 16 * pl.p.H);
      if (pl.p.TJ < 128) {  // and the next wider one would not
        FusedParams wider = pl.p;
        wider.TJ *= 2;
        long long n = 0;
        for (int q = 0; q < wider.Q; ++q) n += lower_tiles(wider, q);
        EXPECT_LT(n * wider.B, window);
      }
    }
}

TEST(FusedPlan, LargeWeightsStreamThroughSharedMemory) {
  const FusedPlan p = make_plan(shape(11, 4096, 1, 64, 64, DType::bf16), 227 * 1024);
  ASSERT_TRUE(p.why_not.empty()) << p.why_not;
  EXPECT_LT(p.p.kchunk, p.p.ksteps);
  EXPECT_LE(p.p.sm_total, 227 * 1024);
}

TEST(FusedPlan, TooMuchSharedMemoryIsReportedNotLaunched) {
  const FusedPlan p = make_plan(shape(11, 4096, 1, 64, 64, DType::bf16), 16 * 1024);
  EXPECT_FALSE(p.why_not.empty());
  EXPECT_FALSE(make_plan(shape(3, 64, 1, 4, 65, DType::bf16), 227 * 1024).why_not.empty());  // > 64 heads out
}

// Statistics chunks: about 32K scores an item, but never fewer than 512 columns (v27: 128, v30:
// 256, v31: 512; each step faster at 8-32 channels), and at most 1024.
TEST(FusedPlan, StatisticsChunksTakeAtLeast512Columns) {
  for (const int c : {1, 2, 4, 8, 16, 32, 64}) {
    const FusedParams p = make_plan(shape(3, 4096, 1, c, 8, DType::bf16), 227 * 1024, kPlanWindow).p;
    SCOPED_TRACE(::testing::Message() << c << " channels");
    EXPECT_GE(p.CS, 512);
    EXPECT_LE(p.CS, 1024);
    EXPECT_TRUE(p.CS == 512 || static_cast<long long>(p.CS) * p.R * p.C <= 32768);
    EXPECT_TRUE(p.CS == 1024 || static_cast<long long>(2 * p.CS) * p.R * p.C > 32768);  // the largest that fits
  }
  EXPECT_EQ(make_plan(shape(7, 4096, 1, 32, 32, DType::bf16), 227 * 1024, kPlanWindow).p.CS, 512);
  EXPECT_EQ(make_plan(shape(3, 4096, 2, 1, 4, DType::bf16), 227 * 1024, kPlanWindow).p.CS, 1024);
}

TEST(FusedPlan, StatisticsLeadTheirFirstTileByFourWindows) {
  const int window = 100;
  const FusedPlan plan = make_plan(shape(3, 4096, 2, 4, 4, DType::bf16), 227 * 1024, window);
  std::map<int, int> last_stats, first_conv, tiles_before;  // tiles_before: of each band's last stats item
  int tiles = 0;
  for (int n = 0; n < plan.p.n_items; ++n) {
    const int4 it = plan.items[n];
    if (it.x == kStatsItem) {
      last_stats[it.z] = n;
      tiles_before[it.z] = tiles;
    } else {
      ++tiles;
    }
    if (it.x == kConvItem && !first_conv.count(it.z)) first_conv[it.z] = n;
  }
  int checked = 0;
  for (const auto& [q, n] : first_conv) {
    if (!last_stats.count(q + 1)) continue;
    ASSERT_LT(last_stats[q + 1], n) << "band " << q;
    // At least 4 x window items ahead (blocks hold two tickets each: 2 x window are taken but
    // perhaps not started), unless placed before any tile (nothing earlier to wait for).
    if (tiles_before[q + 1] > 0) {
      EXPECT_GE(n - last_stats[q + 1], 4 * window) << "band " << q;
      ++checked;
    }
  }
  EXPECT_GT(checked, 100);
}

// v83: the block holding an item takes the next ticket during it only below early_tickets; the
// last wave's tickets (the last `window` items) are taken when an item ends, except with the
// statistics kernel (no item waits on another) or a single wave (measured slower at seq 512).
// v85: a single wave with the statistics kernel takes them all late.
TEST(FusedPlan, LastWaveTicketsAreTakenLate) {
  const int optin = 227 * 1024;
  const FusedPlan many = make_plan(shape(3, 4096, 2, 4, 4, DType::bf16), optin, 100);
  ASSERT_FALSE(many.p.prestats);
  ASSERT_GT(many.p.n_items, 100);
  EXPECT_EQ(many.p.early_tickets, many.p.n_items - 100);
  const FusedPlan one_wave = make_plan(shape(3, 2048, 2, 4, 4, DType::bf16), optin, 100000);
  ASSERT_FALSE(one_wave.p.prestats);
  ASSERT_LE(one_wave.p.n_items, 100000);
  EXPECT_EQ(one_wave.p.early_tickets, one_wave.p.n_items);
  const FusedPlan prestats = make_plan(shape(3, 1024, 2, 4, 4, DType::fp32), optin, 100);
  ASSERT_TRUE(prestats.p.prestats);
  ASSERT_GT(prestats.p.n_items, 100);
  EXPECT_EQ(prestats.p.early_tickets, prestats.p.n_items);
  const FusedPlan prestats_one_wave = make_plan(shape(3, 512, 2, 4, 4, DType::bf16), optin, 100000);
  ASSERT_TRUE(prestats_one_wave.p.prestats);
  EXPECT_EQ(prestats_one_wave.p.early_tickets, 0);
}

// v85r: the few-heads tensor-core instance took the statistics kernel up to seq 512 (one wave of
// items), the other paths up to 1024; v89 (the lean fold): every path up to 1024.
TEST(FusedPlan, StatisticsKernelBoundsByPath) {
  const int optin = 227 * 1024;
  const FusedPlan few512 = make_plan(shape(3, 512, 2, 4, 4, DType::bf16), optin);
  const FusedPlan few1024 = make_plan(shape(3, 1024, 2, 4, 4, DType::bf16), optin);
  ASSERT_TRUE(few512.mma && !few512.p.ldsm);
  ASSERT_TRUE(few1024.mma && !few1024.p.ldsm);
  EXPECT_TRUE(few512.p.prestats);
  EXPECT_TRUE(few1024.p.prestats);
  EXPECT_FALSE(make_plan(shape(3, 1025, 2, 4, 4, DType::bf16), optin).p.prestats);
  EXPECT_TRUE(make_plan(shape(3, 1024, 2, 4, 4, DType::fp32), optin).p.prestats);
  EXPECT_TRUE(make_plan(shape(5, 777, 3, 8, 12, DType::fp16), optin).p.prestats);
  EXPECT_FALSE(make_plan(shape(3, 1025, 2, 4, 4, DType::fp32), optin).p.prestats);
  // v132: the warp-specialised kernel at any seq, its long rows by the wide fold; no stats items.
  const FusedPlan ws = make_plan(shape(7, 4096, 1, 32, 32, DType::bf16), optin, kPlanWindow, kLeadWindows, true);
  ASSERT_EQ(ws.p.ws, 1);
  EXPECT_TRUE(ws.p.prestats);
  EXPECT_EQ(prestats_fold(ws.p), PrestatsFold::stream);  // v138: aligned rows of a multiple of 8
  for (const int4& it : ws.items) EXPECT_NE(it.x, kStatsItem);
  // v138: the GPU test's shapes for the streaming fold (WarpSpecialisedPathCorners). The
  // warp-specialised kernel takes only seq a multiple of 8, so its rows past 1024 columns take the
  // generic fold only where the scores' base is not 16-byte aligned (LeanStatisticsFolds... below).
  for (const long long seq : {2056ll, 4104ll}) {
    const FusedPlan st = make_plan(shape(5, seq, 1, 32, 24, DType::fp16), optin, kPlanWindow, kLeadWindows, true);
    ASSERT_EQ(st.p.ws, 1);
    EXPECT_TRUE(st.p.prestats);
    EXPECT_EQ(prestats_fold(st.p), PrestatsFold::stream);
  }
  EXPECT_EQ(make_plan(shape(5, 1025, 1, 32, 32, DType::bf16), optin, kPlanWindow, kLeadWindows, true).p.ws, 0);
}

// v89: the lean statistics fold loads four vectors of eight scores a lane (1024 columns) whole,
// so it is for 16-byte aligned rows of up to 1024 scores only; v121's lined fold takes rows that
// start m < 8 scores into a line where m + seq <= 1024 and the tensor fills whole lines (its last
// line read ends inside it); the generic fold takes the rest.
TEST(FusedPlan, LeanStatisticsFoldsOnlyForRowsTheyCover) {
  alignas(16) static const unsigned char storage[32] = {};
  FusedParams p{};
  p.B = 2;
  p.C = 4;
  p.scores = storage;
  p.S = 1024;
  EXPECT_EQ(prestats_fold(p), PrestatsFold::aligned);
  p.S = 512;
  EXPECT_EQ(prestats_fold(p), PrestatsFold::aligned);
  p.S = 2048;  // past the four vectors a lane (the probe that failed the oracle): v138's streaming fold
  EXPECT_EQ(prestats_fold(p), PrestatsFold::stream);
  p.S = 1025;  // not a multiple of 8: the generic fold
  EXPECT_EQ(prestats_fold(p), PrestatsFold::generic);
  p.S = 1000;  // a multiple of 8
  EXPECT_EQ(prestats_fold(p), PrestatsFold::aligned);
  p.S = 777;  // rows not 16-byte aligned; B C = 8: B C S S fills whole lines
  EXPECT_EQ(prestats_fold(p), PrestatsFold::lined);
  p.S = 1017;  // m + seq <= 1024 for m <= 7
  EXPECT_EQ(prestats_fold(p), PrestatsFold::lined);
  p.S = 1018;  // a row at m 7 would need 1025 columns
  EXPECT_EQ(prestats_fold(p), PrestatsFold::generic);
  p.S = 777;
  p.C = 3;  // B C S S = 6 * 777^2, not a multiple of 8: the last row's last line passes the end
  EXPECT_EQ(prestats_fold(p), PrestatsFold::generic);
  p.C = 4;
  p.S = 778;  // B C S S = 8 * 778^2
  EXPECT_EQ(prestats_fold(p), PrestatsFold::lined);
  p.S = 1024;
  p.scores = storage + 2;  // a base off 16 bytes
  EXPECT_EQ(prestats_fold(p), PrestatsFold::generic);
  p.S = 777;
  EXPECT_EQ(prestats_fold(p), PrestatsFold::generic);
  p.S = 2048;  // v138: the streaming fold's bulk copies need aligned rows
  EXPECT_EQ(prestats_fold(p), PrestatsFold::generic);
}

// v121: the shapes of the GPU test FusedGpu.StatisticsKernelFolds take the statistics kernel on
// every path they may take (with wgmma or without), so that test reaches both of its 16-bit folds
// for rows not 16-byte aligned: lined where B C S S fills whole lines, generic where not.
TEST(FusedPlan, StatisticsKernelFoldShapesTakeTheStatisticsKernel) {
  const int optin = 227 * 1024;
  for (const bool wgmma_ok : {false, true})
    for (const Workload& w : {shape(5, 777, 3, 8, 12, DType::bf16), shape(3, 1017, 1, 8, 4, DType::fp16),
                              shape(3, 521, 2, 4, 4, DType::fp16), shape(7, 263, 1, 8, 3, DType::bf16),
                              shape(3, 1015, 2, 4, 4, DType::bf16), shape(3, 777, 1, 3, 4, DType::bf16),
                              shape(3, 1018, 1, 8, 4, DType::fp16)}) {
      SCOPED_TRACE(w.shape_string());
      EXPECT_TRUE(make_plan(w, optin, kPlanWindow, kLeadWindows, wgmma_ok).p.prestats);
    }
}

// v75: zero chunks (y stores only) are spread evenly among the conv tiles, so their DRAM writes
// do not pile up in the first half of the run (band order put 74-87% of them before half of the
// tiles at seq 2048-8192). v81: except the last min(zeros / 2, window / 4), kept for the end,
// after the last conv tile, where the last wave's slots would otherwise idle.
TEST(FusedPlan, ZeroChunksSpreadEvenlyAmongTheTilesAndSomeKeptForTheEnd) {
  constexpr int kWindow = 1056;
  for (const Workload& w : {shape(3, 4096, 2, 4, 4, DType::bf16), shape(3, 2048, 2, 4, 4, DType::fp32),
                            shape(7, 4096, 1, 32, 32, DType::bf16), shape(5, 777, 3, 8, 12, DType::fp16),
                            shape(3, 1024, 2, 4, 4, DType::bf16)}) {
    const FusedPlan plan = make_plan(w, 227 * 1024, kWindow);
    ASSERT_TRUE(plan.why_not.empty()) << plan.why_not;
    long long conv = 0, zeros = 0, last_conv = -1;
    for (int n = 0; n < plan.p.n_items; ++n) {
      conv += plan.items[n].x == kConvItem;
      zeros += plan.items[n].x == kZeroItem;
      if (plan.items[n].x == kConvItem) last_conv = n;
    }
    ASSERT_GT(zeros, 0);
    const long long held = std::min(zeros / 2, static_cast<long long>(kWindow / 4));
    ASSERT_GT(held, 0) << "seq " << w.seq;
    // After the last conv tile: exactly the held zero chunks (statistics all come before it).
    EXPECT_EQ(plan.p.n_items - 1 - last_conv, held) << "seq " << w.seq;
    for (long long n = last_conv + 1; n < plan.p.n_items; ++n) EXPECT_EQ(plan.items[n].x, kZeroItem) << "item " << n;
    const long long spread = zeros - held;
    long long c = 0, z = 0;
    for (int n = 0; n < plan.p.n_items; ++n) {
      const int4 it = plan.items[n];
      if (it.x == kZeroItem) ++z;
      if (it.x != kConvItem) continue;
      // Before conv tile c: the zero chunks z with z x conv <= c x spread, give or take one.
      const double due = static_cast<double>(c) * spread / conv;
      EXPECT_LE(std::abs(static_cast<double>(z) - due), 1.5) << "conv tile " << c << " of seq " << w.seq;
      ++c;
    }
  }
}

// The small-seq path: small problems spread over the GPU one row per block, larger ones share
// halo rows, and what it cannot hold goes to the work-queue kernel with a reason.
TEST(FusedSmallPlan, SpreadsRowsOverTheGpuAndFitsSharedMemory) {
  const SmallPlan seed = make_small_plan(shape(3, 32, 2, 4, 4, DType::bf16), 227 * 1024, 132);
  ASSERT_TRUE(seed.why_not.empty()) << seed.why_not;
  EXPECT_EQ(seed.p.RB, 1);
  EXPECT_EQ(seed.grid, 64);  // batch 2 x 32 rows
  EXPECT_EQ(seed.KT, 3);
  EXPECT_EQ(seed.p.SP, 34);  // one zero column each side
  EXPECT_EQ(seed.p.O4, 4);
  // 512 rows: two per block would leave 256 blocks, under two per SM, so one row per block.
  const SmallPlan s256 = make_small_plan(shape(3, 256, 2, 4, 4, DType::bf16), 227 * 1024, 132);
  ASSERT_TRUE(s256.why_not.empty());
  EXPECT_EQ(s256.p.RB, 1);
  EXPECT_EQ(s256.grid, 512);
  // 1024 rows: two per block (512 blocks); four would leave 256.
  const SmallPlan b4 = make_small_plan(shape(3, 256, 4, 4, 4, DType::bf16), 227 * 1024, 132);
  ASSERT_TRUE(b4.why_not.empty());
  EXPECT_EQ(b4.p.RB, 2);
  EXPECT_EQ(b4.grid, 512);
  EXPECT_LE(b4.p.sm_total, 227 * 1024);
  const SmallPlan odd = make_small_plan(shape(9, 61, 1, 3, 5, DType::fp32), 227 * 1024, 132);
  ASSERT_TRUE(odd.why_not.empty());
  EXPECT_EQ(odd.KT, 0);
  EXPECT_EQ(odd.p.O4, 8);
  EXPECT_EQ(odd.grid, 61);
}

// v159, v160: the small kernel divides by plan constants with small_div (one function for host and device): exact for every numerator
// the kernel can pass (blocks up to 2^30, tasks up to RB S O4 / 4, pairs up to halo C), checked
// here on the edges (multiples of d and their neighbours, the largest n) for every divisor a plan
// can produce and some past them, and on each plan's own constants over their whole ranges.
TEST(FusedSmallPlan, MagicDivisionIsExact) {
  std::vector<int> divisors;
  for (int d = 1; d <= 5000; ++d) divisors.push_back(d);
  for (int d : {65535, 65536, 65537, 1 << 20, (1 << 30) - 1, 1 << 30, 2147483647}) divisors.push_back(d);
  std::mt19937 rng(159);
  for (int d : divisors) {
    const unsigned long long m = small_magic(d);
    std::vector<long long> ns = {0, 1, d - 1ll, d, d + 1ll, 2147483647ll, 2147483646ll, (1ll << 30), (1ll << 30) - 1};
    for (int k = 0; k < 40; ++k) {
      const long long q = rng() % (2147483647ll / d + 1);
      for (long long n : {q * d - 1, q * d, q * d + d - 1}) ns.push_back(n);
    }
    for (long long n : ns) {
      if (n < 0 || n > 2147483647ll) continue;
      ASSERT_EQ(small_div(static_cast<int>(n), m), n / d) << "n " << n << " d " << d;
    }
  }
  for (const Workload& w : {shape(3, 32, 2, 4, 4, DType::bf16), shape(9, 61, 1, 3, 5, DType::fp32),
                            shape(3, 256, 8200, 4, 4, DType::bf16), shape(1, 200, 3, 64, 64, DType::fp16)}) {
    const SmallPlan sp = make_small_plan(w, 227 * 1024, 132);
    ASSERT_TRUE(sp.why_not.empty()) << w.shape_string() << ": " << sp.why_not;
    const SmallParams& p = sp.p;
    EXPECT_EQ(p.QB, (p.S + p.RB - 1) / p.RB);
    for (int blk = 0; blk < sp.grid; blk += 1 + blk / 64) ASSERT_EQ(small_div(blk, p.qb_magic), blk / p.QB);
    const int halo = p.RB + 2 * p.r, positions = p.RB * p.S, ckk = p.C * p.K * p.K;
    for (int pair = 0; pair < halo * p.C + 32; ++pair) ASSERT_EQ(small_div(pair, p.halo_magic), pair / halo);
    for (int rest = 0; rest < positions * (p.O4 / 4) + kSmallThreads; ++rest)
      ASSERT_EQ(small_div(rest, p.pos_magic), rest / positions);
    for (int e = 0; e < positions + kSmallThreads; ++e) ASSERT_EQ(small_div(e, p.s_magic), e / p.S);
    for (int e = 0; e < p.O * ckk + kSmallThreads; ++e) ASSERT_EQ(small_div(e, p.ckk_magic), e / ckk);
  }
}

// v162: the small kernel's row maxima by redux.sync on ordered keys: the key's signed order is
// the float's, and the key is its own inverse.
TEST(FusedSmallPlan, ReduxKeysKeepFloatOrder) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> ascending = {-inf, -std::numeric_limits<float>::max(), -1e10f, -1.f, -std::numeric_limits<float>::min(),
                                        -std::numeric_limits<float>::denorm_min(), -0.f, 0.f,
                                        std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::min(), 1.f, 1e10f,
                                        std::numeric_limits<float>::max(), inf};
  const auto bits = [](float f) {
    int b;
    std::memcpy(&b, &f, 4);
    return b;
  };
  for (std::size_t i = 1; i < ascending.size(); ++i)
    EXPECT_LT(ordered_key(bits(ascending[i - 1])), ordered_key(bits(ascending[i]))) << ascending[i - 1] << " < " << ascending[i];
  std::mt19937 rng(162);
  for (int k = 0; k < 100000; ++k) {
    const int b = static_cast<int>(rng());
    ASSERT_EQ(ordered_key(ordered_key(b)), b);
  }
}

// v162: the rows' sums of exponentials (each in [0, 1], NCOL a lane) in fixed point: a warp's 32
// rounded terms fit an unsigned, and the sum is within 2^-19 of the exact one (a row sum is >= 1).
TEST(FusedSmallPlan, FixedPointRowSumFitsAndIsCloseEnough) {
  std::mt19937 rng(1620);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int ncol : {1, 2, 4, 8}) {
    const int bits = small_sum_bits(ncol);
    const double scale = std::ldexp(1.0, bits);
    EXPECT_LE(32.0 * ncol * scale, 4294967295.0) << "ncol " << ncol;
    for (int trial = 0; trial < 2000; ++trial) {
      unsigned long long fixed = 0;
      double exact = 0;
      for (int lane = 0; lane < 32; ++lane) {
        float term = 0.f;  // a lane's fp32 partial sum, as the kernel holds it
        for (int q = 0; q < ncol; ++q) term += static_cast<float>(trial == 0 ? 1.0 : unit(rng));
        exact += term;
        fixed += static_cast<unsigned long long>(std::nearbyint(static_cast<double>(term) * scale));
      }
      ASSERT_LE(fixed, 4294967295ull);
      EXPECT_LE(std::fabs(static_cast<double>(fixed) / scale - exact), std::ldexp(1.0, -19)) << "ncol " << ncol;
    }
  }
}

// v16: the row loads' columns per lane follow seq, and the convolution's tasks (position, four
// heads, channel group) are split by channel groups only while they still fit the block: the
// seed's 32 positions x 1 head group x 4 channel groups = 128 tasks; a position's groups are
// adjacent lanes of one warp (G a power of two <= 8), summed by shuffles.
TEST(FusedSmallPlan, ColumnsPerLaneAndChannelGroupsFitTheBlock) {
  const SmallPlan seed = make_small_plan(shape(3, 32, 2, 4, 4, DType::bf16), 227 * 1024, 132);
  ASSERT_TRUE(seed.why_not.empty());
  EXPECT_EQ(seed.p.NCOL, 1);
  EXPECT_EQ(seed.p.G, 4);
  const SmallPlan s128 = make_small_plan(shape(3, 128, 2, 4, 4, DType::bf16), 227 * 1024, 132);
  EXPECT_EQ(s128.p.NCOL, 4);
  EXPECT_EQ(s128.p.G, 2);  // 128 positions x 2 = 256 tasks
  std::mt19937 rng(11);
  for (int n = 0; n < 300; ++n) {
    const Workload w = shape(1 + 2 * static_cast<int>(rng() % 6), 1 + rng() % 256, 1 + rng() % 4, 1 + rng() % 24,
                             1 + rng() % 40, static_cast<DType>(rng() % 3));
    const SmallPlan sp = make_small_plan(w, 227 * 1024, 132);
    if (!sp.why_not.empty()) continue;
    SCOPED_TRACE(w.shape_string());
    const SmallParams& p = sp.p;
    EXPECT_EQ(p.NCOL & (p.NCOL - 1), 0);
    EXPECT_GE(32 * p.NCOL, p.S);
    EXPECT_LE(p.NCOL, kSmallCols);
    if (p.NCOL > 1) EXPECT_LT(16 * p.NCOL, p.S);  // the fewest that cover seq
    EXPECT_EQ(p.G & (p.G - 1), 0);
    EXPECT_GE(p.G, 1);
    EXPECT_LE(p.G, std::min(8, p.C));
    const long long tasks = static_cast<long long>(p.RB) * p.S * (p.O4 / 4);
    if (p.G > 1) EXPECT_LE(p.G * tasks, kSmallThreads);
  }
}

// v164: the row kernel (a block an output row, a warp a channel) takes seq <= kRowMaxSeq (32
// before v166, 64 before v168), k 3, heads_in <= 8 and heads_out <= 8 where the plan gives one row a block anyway; its
// shared memory holds each warp's weights, the bias and the channels' partial sums.
// FusedGpu.RowPathCorners runs these shapes.
TEST(FusedSmallPlan, RowKernelTakesWhatABlockOfChannelWarpsHolds) {
  for (const Workload& w : {shape(3, 32, 2, 4, 4, DType::bf16), shape(3, 32, 1, 1, 1, DType::fp32),
                            shape(3, 31, 2, 3, 8, DType::fp16), shape(3, 2, 3, 2, 7, DType::bf16),
                            shape(3, 17, 1, 8, 5, DType::fp32), shape(3, 32, 4, 4, 8, DType::fp16),
                            shape(3, 5, 1, 1, 6, DType::bf16), shape(3, 1, 1, 7, 8, DType::fp32),
                            shape(3, 1, 700, 2, 3, DType::bf16), shape(3, 64, 2, 4, 4, DType::bf16),
                            shape(3, 33, 1, 3, 7, DType::fp16), shape(3, 50, 1, 8, 8, DType::fp32),
                            shape(3, 65, 1, 4, 4, DType::bf16), shape(3, 128, 2, 4, 4, DType::bf16),
                            shape(3, 97, 1, 1, 1, DType::bf16), shape(3, 128, 1, 8, 8, DType::fp32)}) {
    SCOPED_TRACE(w.shape_string());
    const SmallPlan sp = make_small_plan(w, 227 * 1024, 132);
    ASSERT_TRUE(sp.why_not.empty()) << sp.why_not;
    const SmallParams& p = sp.p;
    EXPECT_EQ(p.NCOL, w.seq > 64 ? 4 : w.seq > 32 ? 2 : 1);  // the instance: columns a lane
    EXPECT_TRUE(sp.row);
    EXPECT_EQ(sp.threads, 32 * p.C);
    EXPECT_EQ(p.RB, 1);
    EXPECT_EQ(p.QB, p.S);
    EXPECT_EQ(sp.grid, w.batch * w.seq);
    // Weights [c][u][v][o4], then the bias, then the partial sums [O4][C][32], 16-byte aligned.
    EXPECT_EQ(p.sm_w, 0);
    EXPECT_GE(p.sm_bias, p.C * 9 * p.O4 * 4);
    EXPECT_GE(p.sm_p, p.sm_bias + p.O * 4);
    EXPECT_EQ(p.sm_p % 16, 0);
    EXPECT_GE(p.sm_total, p.sm_p + p.O4 * p.C * 32 * p.NCOL * 4);
    EXPECT_LE(9 * p.O, kRowWeightRegs * 32);  // a lane's registers hold its share of a channel's weights
  }
  // seq 129-256 (v167's eight columns a lane measured the same as the small kernel), k 5, 9
  // channels, 9 heads out, and enough rows that the plan puts several in a block (64 batches of
  // 32: 16 a block; 4 of 256: 2) keep the small kernel; so does a row kernel whose partial sums
  // would not fit the opt-in (seq 128 at 8 x 8 heads needs ~35 KB).
  const SmallPlan tight = make_small_plan(shape(3, 128, 1, 8, 8, DType::bf16), 32 * 1024, 132);
  EXPECT_TRUE(tight.why_not.empty()) << tight.why_not;  // the small kernel's ~15 KB fit
  EXPECT_FALSE(tight.row);
  for (const Workload& w : {shape(3, 129, 1, 3, 5, DType::fp16), shape(3, 256, 2, 4, 4, DType::bf16),
                            shape(3, 256, 4, 4, 4, DType::bf16), shape(5, 32, 1, 4, 4, DType::bf16),
                            shape(3, 32, 1, 9, 4, DType::bf16), shape(3, 32, 1, 4, 9, DType::fp32),
                            shape(3, 32, 64, 4, 4, DType::bf16)}) {
    SCOPED_TRACE(w.shape_string());
    const SmallPlan sp = make_small_plan(w, 227 * 1024, 132);
    ASSERT_TRUE(sp.why_not.empty()) << sp.why_not;
    EXPECT_FALSE(sp.row);
    EXPECT_EQ(sp.threads, kSmallThreads);
  }
}

// The sanitizers (tests/gpu/sanitizer-workloads.json, fused_memcheck and fused_racecheck) reach
// every instance (kernel, element type, k compiled in, columns a lane) of the small plan's two
// kernels that a shipped workload (workloads/*.json) runs, and each kernel's forms at least once:
// the row kernel at 1, 2 and 4 columns a lane, the small kernel's k 3 and general-k instances.
// v166 and v168 widened the row kernel over shapes the list had given the small kernel: the
// small kernel's k 3 instance lost its only sanitizer workload with v166 unnoticed, and v168 left
// seq 256's (NCOL 8) without one (found in the fifty-seventh session, the second by a review).
namespace {
SmallPlan sanitizer_plan(const Workload& w) { return make_small_plan(w, 227 * 1024, 132); }
std::string small_plan_instance(const Workload& w, const SmallPlan& sp) {
  return std::string(sp.row ? "row" : "small") + " " + dtype_name(w.dtype) + " KT " + std::to_string(sp.row ? 3 : sp.KT) +
         " NCOL " + std::to_string(sp.p.NCOL);
}
}  // namespace

TEST(FusedSmallPlan, SanitizerWorkloadsReachEverySmallPlanInstance) {
  const std::filesystem::path root(MTABENCH_SOURCE_DIR);
  std::set<std::string> reached, kinds;
  for (const Workload& w : load_workloads(root / "tests/gpu/sanitizer-workloads.json")) {
    const SmallPlan sp = sanitizer_plan(w);
    if (!sp.why_not.empty()) continue;
    reached.insert(small_plan_instance(w, sp));
    kinds.insert(sp.row ? "row NCOL " + std::to_string(sp.p.NCOL) : "small KT " + std::to_string(sp.KT));
  }
  for (const char* kind : {"row NCOL 1", "row NCOL 2", "row NCOL 4", "small KT 3", "small KT 0"})
    EXPECT_TRUE(kinds.count(kind)) << kind << " has no sanitizer workload";
  int shipped = 0;
  for (const auto& file : std::filesystem::directory_iterator(root / "workloads")) {
    if (file.path().extension() != ".json") continue;
    for (const Workload& w : load_workloads(file.path())) {
      const SmallPlan sp = sanitizer_plan(w);
      if (!sp.why_not.empty()) continue;
      const std::string instance = small_plan_instance(w, sp);
      ++shipped;
      EXPECT_TRUE(reached.count(instance)) << w.name << " (" << file.path().filename().string() << ") runs " << instance
                                           << ", which no sanitizer workload reaches";
    }
  }
  EXPECT_GT(shipped, 0) << "no shipped workload takes the small plan: the test checks nothing";
}

TEST(FusedSmallPlan, RowsPerBlockStopAtTheSeq) {
  // seq 1 over many batches: more rows per block would only be halo rows of zeros.
  const SmallPlan p = make_small_plan(shape(3, 1, 4096, 2, 3, DType::fp32), 227 * 1024, 132);
  ASSERT_TRUE(p.why_not.empty());
  EXPECT_EQ(p.p.RB, 1);
  EXPECT_EQ(p.grid, 4096);
  const SmallPlan q = make_small_plan(shape(3, 5, 4096, 2, 3, DType::fp32), 227 * 1024, 132);
  EXPECT_EQ(q.p.RB, 4);  // 8 rows per block would pass the seq
}

TEST(FusedSmallPlan, RefusesWhatBelongsToTheWorkQueueKernel) {
  EXPECT_NE(make_small_plan(shape(3, 257, 1, 4, 4, DType::bf16), 227 * 1024, 132).why_not, "");
  // 32 x 3 x 3 x 32 = 9216 multiply-adds per position: tensor cores.
  EXPECT_NE(make_small_plan(shape(3, 64, 1, 32, 32, DType::bf16), 227 * 1024, 132).why_not, "");
  // A row of 64 channels x 256 columns does not fit in 16 KB of shared memory.
  EXPECT_NE(make_small_plan(shape(1, 256, 1, 64, 1, DType::fp32), 16 * 1024, 132).why_not, "");
}

// v72: the interleave path (1-4 heads out) runs 128-thread blocks over 8-row bands where the
// halo allows (k <= 9); k 11 takes the ldmatrix path with 16-row bands and 256 threads.
TEST(FusedPlan, FewHeadsTakeEightRowBandsUpToK9) {
  for (int k : {1, 3, 5, 7, 9, 11})
    for (int co : {1, 2, 4})
      for (long long seq : {300ll, 4096ll}) {
        const FusedPlan pl = make_plan(shape(k, seq, 2, 4, co, DType::fp16), 227 * 1024);
        SCOPED_TRACE(pl.describe());
        ASSERT_TRUE(pl.why_not.empty()) << pl.why_not;
        EXPECT_EQ(pl.p.ldsm, k == 11 ? 1 : 0);
        EXPECT_EQ(pl.p.R, k == 11 ? 16 : kFewRows);
        EXPECT_EQ(pl.p.threads, k == 11 ? 256 : kFewThreads);
        EXPECT_LE(2 * pl.p.r, pl.p.R);
      }
}

// The shapes of the GPU test FusedGpu.LdmatrixPathCorners take the paths it is named after.
TEST(FusedPlan, LdmatrixPathTakesTheseShapes) {
  auto plan = [](int k, long long seq, int hin, int hout, DType t) {
    return make_plan(shape(k, seq, 1, hin, hout, t), 227 * 1024);
  };
  const FusedPlan one_head = plan(1, 300, 48, 1, DType::bf16);
  EXPECT_EQ(one_head.p.ldsm, 1);  // the interleave's 128-column tile of 48 channels does not fit
  EXPECT_EQ(one_head.p.TJ, 32);   // v127: NT 2's half tile, two blocks an SM
  EXPECT_EQ(ldsm_narrow(one_head.p), kLdsmHalf);
  const FusedPlan narrow = plan(11, 300, 64, 1, DType::fp16);
  EXPECT_EQ(narrow.p.ldsm, 1);
  EXPECT_EQ(narrow.p.TJ, 16);  // the 16-column fallback
  EXPECT_EQ(ldsm_narrow(narrow.p), 1);
  EXPECT_EQ(plan(11, 264, 64, 16, DType::bf16).p.TJ, 16);
  const FusedPlan six_chunks = plan(9, 300, 48, 30, DType::fp16);
  EXPECT_EQ(six_chunks.p.Cp, 48);
  EXPECT_EQ(six_chunks.p.NT, 4);
  EXPECT_EQ(six_chunks.p.TJ, 32);
  EXPECT_EQ(ldsm_narrow(six_chunks.p), 0);  // NT 4's wide tile is 32 columns
  const FusedPlan unaligned = plan(5, 777, 12, 8, DType::bf16);
  EXPECT_EQ(unaligned.p.ldsm, 1);
  EXPECT_EQ(ldsm_narrow(unaligned.p), kLdsmTwoPass);  // v130: the wide tile in two passes
  EXPECT_EQ(unaligned.p.TJ, 64);
  EXPECT_EQ(unaligned.p.kchunk, unaligned.p.ksteps);
  // Its staging tile lies clear of the probability tile, which the second pass still reads.
  const FusedParams& u = unaligned.p;
  EXPECT_GE(u.sm_y, u.sm_p + (u.R + 2 * u.r) * u.PW * u.pitch_w * 4);
  EXPECT_GE(u.sm_total, u.sm_y + u.O * u.yhp * 2);
  // v130 with the weights streamed in chunks (each pass streams them again).
  const FusedPlan streamed = plan(5, 300, 24, 12, DType::fp16);
  EXPECT_EQ(ldsm_narrow(streamed.p), kLdsmTwoPass);
  EXPECT_LT(streamed.p.kchunk, streamed.p.ksteps);
  // v127: where two half tiles do not fit in an SM's shared memory, NT 2 keeps the wide tile.
  const FusedPlan wide = plan(7, 300, 56, 8, DType::bf16);
  EXPECT_EQ(wide.p.NT, 2);
  EXPECT_EQ(wide.p.TJ, 64);
  EXPECT_EQ(ldsm_narrow(wide.p), 0);
  for (const FusedPlan* pl : {&one_head, &unaligned, &streamed})
    EXPECT_LE(pl->p.sm_total, (227 * 1024 + 1024) / 2 - 1024);
}

// FusedGpu.DISABLED_IndexesPast32Bits' shapes (scores and y just past 2^31 elements): each takes the path
// its comment names, so that test covers every kernel past 32-bit products.
TEST(FusedPlan, SixtyFourBitShapesTakeEachPath) {
  auto plan = [](int k, long long seq, int batch, int hin, int hout, DType t) {
    const Workload w = shape(k, seq, batch, hin, hout, t);
    EXPECT_GT(w.y_elems(), std::int64_t{1} << 31) << w.shape_string();
    EXPECT_GT(w.scores_elems(), std::int64_t{1} << 31) << w.shape_string();
    const FusedPlan pl = make_plan(w, 227 * 1024, kPlanWindow, kLeadWindows, true);
    EXPECT_TRUE(pl.why_not.empty()) << pl.why_not;
    EXPECT_EQ(pl.p.n_items, static_cast<long long>(pl.items.size()));
    return pl;
  };
  const FusedPlan few = plan(3, 23176, 1, 4, 4, DType::bf16);
  EXPECT_TRUE(few.mma);
  EXPECT_EQ(few.p.fill4, 1);
  EXPECT_EQ(few.p.ldsm, 0);
  EXPECT_FALSE(plan(3, 23176, 1, 4, 4, DType::fp32).mma);
  const FusedPlan ldsm = plan(5, 16392, 1, 8, 12, DType::bf16);
  EXPECT_EQ(ldsm.p.ldsm, 1);
  EXPECT_EQ(ldsm.p.wgmma, 0);
  const FusedPlan rs = plan(5, 11592, 1, 16, 16, DType::fp16);
  EXPECT_EQ(rs.p.wgmma_rs, 1);
  EXPECT_EQ(rs.p.ws, 0);
  const FusedPlan ws = plan(7, 8200, 1, 32, 32, DType::bf16);
  EXPECT_EQ(ws.p.ws, 1);
  EXPECT_EQ(ws.p.prestats, 1);
  check_plan(shape(7, 8200, 1, 32, 32, DType::bf16), true);
  const Workload small = shape(3, 256, 8200, 4, 4, DType::bf16);
  EXPECT_GT(small.y_elems(), std::int64_t{1} << 31);
  EXPECT_TRUE(make_small_plan(small, 227 * 1024, 132).why_not.empty());
}

// The wgmma instance (sm_90a) takes heads_in a multiple of 16 with more than 4 heads out when
// the tile and all the weights fit, and only when allowed.
TEST(FusedPlan, WgmmaPathTakesTheseShapes) {
  auto plan = [](int k, int hin, int hout, bool ok) {
    return make_plan(shape(k, 4096, 1, hin, hout, DType::bf16), 227 * 1024, kPlanWindow, kLeadWindows, ok).p;
  };
  EXPECT_EQ(plan(7, 32, 32, true).wgmma, 1);
  EXPECT_EQ(plan(7, 32, 32, true).ksteps, 98);  // 49 taps x 2 chunk pairs
  EXPECT_EQ(plan(5, 16, 16, true).wgmma, 1);
  EXPECT_EQ(plan(7, 32, 32, false).wgmma, 0);  // not allowed: the ldmatrix path
  EXPECT_EQ(plan(7, 32, 32, false).ldsm, 1);
  EXPECT_EQ(plan(7, 24, 32, true).wgmma, 0);   // heads_in not a multiple of 16
  EXPECT_EQ(plan(3, 16, 4, true).wgmma, 0);    // 4 heads out: the interleave path
  EXPECT_EQ(plan(11, 64, 64, true).wgmma, 0);  // 1.9 MB of weights: the ldmatrix path
  // FusedGpu.WgmmaPathCorners' shapes (n-tiles 2, 4, 8).
  auto shape_plan = [](int k, long long seq, int batch, int hin, int hout, DType t) {
    return make_plan(shape(k, seq, batch, hin, hout, t), 227 * 1024, kPlanWindow, kLeadWindows, true).p;
  };
  EXPECT_EQ(shape_plan(1, 300, 1, 16, 5, DType::bf16).wgmma, 1);
  EXPECT_EQ(shape_plan(3, 520, 2, 32, 32, DType::fp16).wgmma, 1);
  EXPECT_EQ(shape_plan(7, 300, 1, 32, 32, DType::bf16).wgmma, 1);
  EXPECT_EQ(shape_plan(3, 777, 1, 48, 17, DType::bf16).NT, 4);
  EXPECT_EQ(shape_plan(3, 777, 1, 48, 17, DType::bf16).wgmma, 1);
  EXPECT_EQ(shape_plan(3, 1000, 1, 32, 64, DType::fp16).NT, 8);
  EXPECT_EQ(shape_plan(3, 1000, 1, 32, 64, DType::fp16).wgmma, 1);
  EXPECT_EQ(shape_plan(11, 264, 1, 16, 8, DType::bf16).wgmma, 1);
  EXPECT_EQ(shape_plan(5, 301, 2, 16, 12, DType::fp16).wgmma, 1);
  // FusedGpu.WgmmaPathCorners' register-A shapes: every (n-tiles, k) of the path, both dtypes.
  std::set<std::tuple<int, int, DType>> rs_corners;
  for (const auto& [k, seq, batch, hin, hout, t] : std::vector<std::tuple<int, long long, int, int, int, DType>>{
           {7, 300, 1, 32, 32, DType::bf16}, {5, 301, 2, 16, 12, DType::fp16}, {7, 777, 1, 16, 9, DType::bf16},
           {5, 520, 2, 32, 24, DType::fp16}, {7, 300, 1, 32, 32, DType::fp16}, {5, 264, 1, 16, 16, DType::bf16},
           {7, 1000, 2, 16, 10, DType::fp16}, {5, 300, 2, 16, 32, DType::bf16}}) {
    const FusedParams p = shape_plan(k, seq, batch, hin, hout, t);
    EXPECT_EQ(p.wgmma_rs, 1) << "k " << k << " heads " << hin << "/" << hout;
    rs_corners.insert({p.NT, k, t});
  }
  EXPECT_EQ(rs_corners.size(), 8u);  // n-tiles 2, 4 x k 5, 7 x bf16, fp16
  // A from registers (v14) for k 5 and 7 with up to 32 heads out, both operands in shared memory
  // otherwise.
  for (const auto& [k, hin, hout, rs] : std::vector<std::tuple<int, int, int, int>>{
           {7, 32, 32, 1}, {5, 16, 16, 1}, {5, 16, 12, 1}, {7, 16, 9, 1}, {5, 32, 24, 1},
           {3, 32, 32, 0}, {11, 16, 8, 0}, {3, 32, 64, 0}, {1, 16, 5, 0}}) {
    const FusedParams p = shape_plan(k, 777, 1, hin, hout, DType::bf16);
    EXPECT_EQ(p.wgmma, 1) << "k " << k << " heads " << hin << "/" << hout;
    EXPECT_EQ(p.wgmma_rs, rs) << "k " << k << " heads " << hin << "/" << hout;
  }
  // Warp-specialised (v41) for 4 n-tiles, two to four chunk pairs, seq a multiple of 8 and shared
  // statistics; FusedGpu.WarpSpecialisedPathCorners runs these shapes.
  for (const auto& [k, seq, hin, hout, t, ws] : std::vector<std::tuple<int, long long, int, int, DType, int>>{
           {7, 1024, 32, 32, DType::bf16, 1}, {5, 520, 32, 24, DType::fp16, 1}, {5, 1032, 32, 32, DType::bf16, 1},
           {7, 4096, 32, 32, DType::bf16, 1}, {7, 1000, 32, 32, DType::fp16, 1}, {7, 2048, 32, 27, DType::bf16, 1}, {7, 777, 32, 32, DType::bf16, 0},
           {7, 256, 32, 32, DType::bf16, 0}, {5, 2048, 16, 16, DType::bf16, 0}, {7, 1024, 16, 32, DType::bf16, 0}}) {
    const FusedParams p = shape_plan(k, seq, 1, hin, hout, t);
    EXPECT_EQ(p.ws, ws) << "k " << k << " seq " << seq << " heads " << hin << "/" << hout;
  }
}

// v29: the register-A path's staged outputs. The 2-byte stores of one warp instruction
// (stage_wgmma_rows: lanes g over 8 consecutive columns, t over heads 2t apart) hit 4 different
// 16-byte bank groups for every row, n-tile, accumulator and warp; store_staging reads (head,
// row, vector v) at o * yhp + row * (TJ + 8) + 8 v, which is wgmma_staged_offset's element,
// 16-byte aligned; planes do not overlap.
TEST(FusedPlan, WgmmaStagedOutputsSpreadOverBanks) {
  for (int r = 0; r < kWgmmaRows; ++r)
    for (int nt = 0; nt < 4; ++nt)
      for (int x = 0; x < 4; ++x)
        for (int w = 0; w < 4; ++w) {
          std::map<int, std::set<int>> groups;  // 16-byte bank group (of 8) -> the lanes' bytes
          for (int lane = 0; lane < 32; ++lane) {
            const int g = lane >> 2, t = lane & 3;
            const int byte = wgmma_staged_offset(nt * 8 + 2 * t + (x & 1), r, 16 * w + g + 8 * ((x >> 1) & 1)) * 2;
            groups[byte / 16 % 8].insert(byte);
          }
          EXPECT_EQ(groups.size(), 4u) << "row " << r << " n-tile " << nt << " x " << x << " warp " << w;
          for (const auto& [group, bytes] : groups) EXPECT_EQ(bytes.size(), 8u);  // one 16-byte chunk each
        }
  const FusedParams p =
      make_plan(shape(7, 4096, 1, 16, 32, DType::bf16), 227 * 1024, kPlanWindow, kLeadWindows, true).p;
  ASSERT_EQ(p.wgmma_rs, 1);
  ASSERT_EQ(p.ws, 0);  // 16 channels: one chunk pair, nothing to pipeline
  for (int o = 0; o < 32; ++o) {
    for (int row = 0; row < p.R; ++row)
      for (int v = 0; v < p.TJ / 8; ++v) {
        EXPECT_EQ(o * p.yhp + row * (p.TJ + 8) + 8 * v, wgmma_staged_offset(o, row, 8 * v));
        EXPECT_EQ(wgmma_staged_offset(o, row, 8 * v) * 2 % 16, 0);
      }
    EXPECT_GE(wgmma_staged_offset(o + 1, 0, 0), wgmma_staged_offset(o, p.R - 1, p.TJ - 1) + 1);
  }
}

// load_weight_cores (v51) writes weight (head n, channel c, tap uv = u K + v) at k index
// kk = uv Cp + c: split_k must name that weight there, and the (k index, head) places it writes,
// weights and zeros, must be every 2-byte place of the weights' space once (wgmma_b_offset).
TEST(FusedPlan, WgmmaWeightCoresHoldWhatSplitKNames) {
  for (const auto& [k, hin, hout] : std::vector<std::tuple<int, int, int>>{
           {7, 32, 32}, {5, 16, 16}, {5, 32, 24}, {3, 48, 17}, {1, 16, 5}, {11, 16, 8}, {3, 32, 64}}) {
    SCOPED_TRACE(::testing::Message() << "k " << k << " heads " << hin << "/" << hout);
    const FusedParams p =
        make_plan(shape(k, 777, 1, hin, hout, DType::bf16), 227 * 1024, kPlanWindow, kLeadWindows, true).p;
    ASSERT_EQ(p.wgmma, 1);
    const int KK = p.K * p.K, N = p.NT * 8;
    ASSERT_EQ(p.ksteps * 16, KK * p.Cp);  // no padding k-steps: load_weight_cores writes none
    std::vector<int> written(p.ksteps * 16 * N, 0);  // 2-byte places of the weights' space
    int weights = 0;
    for (int kk = 0; kk < p.ksteps * 16; ++kk) {
      const KIndex x = split_k(p, kk);
      const int uv = kk / p.Cp, c = kk % p.Cp;
      ASSERT_FALSE(x.pad) << "kk " << kk;
      ASSERT_EQ(x.u * p.K + x.v, uv) << "kk " << kk;
      ASSERT_EQ(x.c, c) << "kk " << kk;
      for (int n = 0; n < N; ++n) {
        const int at = wgmma_b_offset(p, kk >> 4, kk & 15, n);
        ASSERT_EQ(at % 2, 0);
        ASSERT_GE(at, 0);
        ASSERT_LT(at / 2, static_cast<int>(written.size()));
        ++written[at / 2];
        weights += c < p.C && n < p.O;
      }
    }
    EXPECT_EQ(std::count(written.begin(), written.end(), 1), static_cast<long>(written.size()));
    EXPECT_EQ(weights, hout * hin * k * k);  // every weight once
  }
}

// The wgmma path's addressing, checked against the PTX ISA's canonical K-major, no-swizzle layout
// of a descriptor (element (r, k) of an operand with 16-byte rows: start + (r % 8) * 16 +
// (r / 8) * SBO + (k % 8) * 2 + (k / 8) * LBO): every A element a k-step's wgmma reads for output
// row rho, position m, is the probability the fill wrote for window row rho + u, tile column
// col0 + m + v, channel c of that k index; every B element is where the weights were written.
TEST(FusedPlan, WgmmaDescriptorsReadWhatTheFillWrote) {
  auto canonical = [](int start, int lbo, int sbo, int r, int k) {
    return start + (r % 8) * 16 + (r / 8) * sbo + (k % 8) * 2 + (k / 8) * lbo;
  };
  for (const Workload& w : {shape(7, 4096, 1, 32, 32, DType::bf16), shape(11, 264, 1, 16, 8, DType::bf16),
                            shape(3, 1000, 1, 32, 64, DType::fp16), shape(3, 777, 1, 48, 17, DType::bf16)}) {
    SCOPED_TRACE(w.shape_string());
    const FusedParams p = make_plan(w, 227 * 1024, kPlanWindow, kLeadWindows, true).p;
    ASSERT_EQ(p.wgmma, 1);
    int mismatches = 0;
    for (int s = 0; s < p.ksteps; ++s)
      for (int k = 0; k < 16; ++k) {
        const KIndex x = split_k(p, s * 16 + k);
        ASSERT_FALSE(x.pad);
        for (int rho = 0; rho < p.R; rho += 5)
          for (int m = 0; m < 64; ++m) {
            const int read = canonical(wgmma_row_offset(p, rho) + wgmma_koff(p, s), wgmma_a_lbo(p), kWgmmaSbo, m, k);
            const int wrote = chunked_offset(p, rho + x.u, p.col0 + m + x.v, x.c);
            if (read != wrote && ++mismatches <= 3)
              ADD_FAILURE() << "A: k-step " << s << " k " << k << " row " << rho << " position " << m;
          }
        for (int n = 0; n < p.NT * 8; ++n)
          if (canonical(wgmma_b_start(p, s), wgmma_b_lbo(p), kWgmmaSbo, n, k) != wgmma_b_offset(p, s, k, n) &&
              ++mismatches <= 3)
            ADD_FAILURE() << "B: k-step " << s << " k " << k << " head " << n;
      }
    EXPECT_EQ(mismatches, 0);
    // The kernel's walk over (u, v, chunk pair) visits the k-steps in order.
    const int G2 = p.Cp / 16;
    for (int s = 0; s < p.ksteps; ++s)
      EXPECT_EQ(wgmma_tap_offset(p, s / G2 / p.K, s / G2 % p.K, s % G2), wgmma_koff(p, s)) << "k-step " << s;
    EXPECT_EQ(p.ksteps, p.K * p.K * G2);
    // The register-A path's ldmatrix rows: element e of register i of lane (g, t) is matrix i's
    // row g, column 2 t + e, whose row address lane 8 i + g gives; the wgmma A layout wants
    // position 16 w + g + 8 (i & 1), k 2 t + e + 8 (i >> 1) of the chunk pair there.
    for (int rho = 0; rho < p.R + 2 * p.r; rho += 3)
      for (int v = 0; v < p.K; ++v)
        for (int gp = 0; gp < G2; ++gp)
          for (int w4 = 0; w4 < 4; ++w4)
            for (int lane = 0; lane < 32; ++lane)
              for (int i = 0; i < 4; ++i)
                for (int e = 0; e < 2; ++e) {
                  const int g = lane >> 2, t = lane & 3;
                  const int got = wgmma_rs_a_offset(p, rho, v, gp, w4, 8 * i + g) + (2 * t + e) * 2;
                  const int want = chunked_offset(p, rho, p.col0 + v + 16 * w4 + g + 8 * (i & 1), 16 * gp + 2 * t + e + 8 * (i >> 1));
                  if (got != want && ++mismatches <= 3)
                    ADD_FAILURE() << "register A: row " << rho << " v " << v << " lane " << lane << " register " << i;
                }
    EXPECT_EQ(mismatches, 0);
    // Everything read lies in the tile: the last window row and column, the last channel.
    EXPECT_LE(chunked_offset(p, p.R - 1 + 2 * p.r, p.col0 + 63 + 2 * p.r, p.Cp - 1) + 2, (p.Cp / 8) * p.cstride);
    EXPECT_LE(p.col0 + 63 + 2 * p.r, p.PW - 1);
  }
}

// The support range: heads_in and heads_out 1-64 for every odd k to 11 and every dtype
// must have a tiling that fits the H200's 227 KB of shared memory per block (seq 300: the work
// queue, not the small-seq kernel; the layout does not depend on seq beyond that).
TEST(FusedPlan, EveryHeadCountToSixtyFourFits) {
  int failures = 0;
  for (int k = 1; k <= 11; k += 2)
    for (int hin = 1; hin <= 64; ++hin)
      for (int hout = 1; hout <= 64; ++hout)
        for (DType t : {DType::bf16, DType::fp16, DType::fp32}) {
          const FusedPlan plan = make_plan(shape(k, 300, 1, hin, hout, t), 227 * 1024);
          if (!plan.why_not.empty() && ++failures <= 5)
            ADD_FAILURE() << "k " << k << " heads " << hin << "/" << hout << " " << dtype_name(t) << ": " << plan.why_not;
        }
  EXPECT_EQ(failures, 0);
}

}  // namespace
}  // namespace mtabench::fused
