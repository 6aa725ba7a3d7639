// fused-plan-report: the fused kernel's work order for the runs in record files, rebuilt on the
// host (no GPU needed) at each record's own grid. For each fused record: the plan (and whether it
// is the one the record's run used), the items by kind, where the first tile stands, and how many
// tiles come less than one or two windows (grid sizes) after the last statistics item they wait
// for (blocks hold two tickets, so such a tile can find them unfinished and sleep on the band
// flag), and the share of the zero chunks placed before half of the tiles. The tiles are
// issue-bound and about equally long, so that half of the order is about half of the run; the
// zero chunks are pure DRAM writes, which the tiles hide only when spread among them. The last
// column predicted the nineteenth session's measurements (JOURNAL.md v74, v75: band order 74-87%,
// zero chunks first 100% and 2-5% slower, spread ~50% and 1-3% faster); the window columns did
// not (v74 lowered them and lost, v75 raised them and gained). The order is this checkout's
// plan code's: the plan string says whether the tiling is the record's, not whether the order is.
// Usage: fused-plan-report RECORDS.jsonl [...]
#include "harness/dtype.h"
#include "harness/workload.h"
#include "impls/fused/fused_plan.h"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using mtabench::Workload;
using mtabench::fused::FusedPlan;
using mtabench::fused::kConvItem;
using mtabench::fused::kStatsItem;
using mtabench::fused::kZeroItem;

struct OrderStats {
  long long stats = 0, conv = 0, zero = 0, first_conv = -1, within1 = 0, within2 = 0;
  long long zero_first_half = 0;  // zero chunks placed before half of the conv tiles
};

// Tiles wait for the statistics of their band and of the bands on either side (the halo rows).
OrderStats order_stats(const FusedPlan& plan, long long window) {
  OrderStats s;
  const int Q = plan.p.Q;
  std::vector<long long> last_stats(static_cast<std::size_t>(plan.p.B) * Q, -1);
  for (std::size_t n = 0; n < plan.items.size(); ++n) {
    const int4 it = plan.items[n];
    if (it.x == kStatsItem) last_stats[static_cast<std::size_t>(it.y) * Q + it.z] = static_cast<long long>(n);
  }
  long long tiles = 0;
  for (const int4& it : plan.items) tiles += it.x == kConvItem;
  for (std::size_t n = 0; n < plan.items.size(); ++n) {
    const int4 it = plan.items[n];
    if (it.x == kZeroItem && 2 * s.conv < tiles) ++s.zero_first_half;
    if (it.x == kStatsItem) ++s.stats;
    if (it.x == kZeroItem) ++s.zero;
    if (it.x != kConvItem) continue;
    ++s.conv;
    if (s.first_conv < 0) s.first_conv = static_cast<long long>(n);
    long long ready = -1;
    for (int q = std::max(0, it.z - 1); q <= std::min(Q - 1, it.z + 1); ++q)
      ready = std::max(ready, last_stats[static_cast<std::size_t>(it.y) * Q + q]);
    if (ready < 0) continue; // local statistics: nothing to wait for
    const long long behind = static_cast<long long>(n) - ready;
    s.within1 += behind < window;
    s.within2 += behind < 2 * window;
  }
  return s;
}

// The fields a plan depends on, from the record's workload block.
Workload workload_of(const nlohmann::json& w, const std::string& where) {
  Workload out;
  out.name = w.at("name").get<std::string>();
  out.k = w.at("k").get<int>();
  out.seq = w.at("seq").get<std::int64_t>();
  out.batch = w.at("batch").get<std::int64_t>();
  out.heads_in = w.at("heads_in").get<std::int64_t>();
  out.heads_out = w.at("heads_out").get<std::int64_t>();
  const auto dt = mtabench::parse_dtype(w.at("dtype").get<std::string>());
  if (!dt) throw std::runtime_error(where + ": workload.dtype: not a dtype");
  out.dtype = *dt;
  mtabench::validate_workload(out, where, "/workload");
  return out;
}

// One record: its row (and the header first when `header`); 1 if it had a work order, else 0.
int report_record(const nlohmann::json& r, const std::string& where, bool header) {
  if (!r.contains("implementation") || r["implementation"].value("name", "") != "fused") return 0;
  const auto& cfg = r["implementation"].value("configuration", nlohmann::json::object());
  // The work-queue kernel's runs name their plan; the small-seq kernel's (no work order) do not.
  if (!cfg.contains("grid") || !cfg.contains("plan")) return 0;
  const Workload w = workload_of(r.at("workload"), where);
  const auto& dev = r.at("provenance").at("device");
  const int smem = mtabench::fused::dynamic_smem_budget(dev.at("smem_per_block_optin").get<std::int64_t>());
  // As fused.cu decides: compute capability 9.0 and a build that compiled sm_90a.
  const std::string archs = r.at("provenance").at("harness").value("cuda_architectures", "");
  const bool wgmma_ok =
      dev.at("compute_capability").get<std::string>() == "9.0" && archs.find("90a") != std::string::npos;
  const long long grid = cfg.at("grid").get<long long>();
  const FusedPlan plan =
      mtabench::fused::make_plan(w, smem, static_cast<int>(grid), mtabench::fused::kLeadWindows, wgmma_ok);
  if (!plan.why_not.empty()) throw std::runtime_error(where + ": no plan here: " + plan.why_not);
  const OrderStats s = order_stats(plan, grid);
  const char* same = cfg["plan"] == plan.describe() ? "yes" : "no";
  if (header)
    fmt::print("{:<26} {:>5} {:>7} {:>6} {:>6} {:>6} {:>10} {:>8} {:>8} {:>9}  {}\n", "workload", "grid", "items",
               "stats", "conv", "zero", "first conv", "<1 win", "<2 win", "zero 1st", "plan (the same as the record's?)");
  const double c = s.conv > 0 ? 100.0 / static_cast<double>(s.conv) : 0.0;
  const double z = s.zero > 0 ? 100.0 * static_cast<double>(s.zero_first_half) / static_cast<double>(s.zero) : 0.0;
  fmt::print("{:<26} {:>5} {:>7} {:>6} {:>6} {:>6} {:>10} {:>7.1f}% {:>7.1f}% {:>8.1f}%  {} ({})\n", w.name, grid,
             plan.items.size(), s.stats, s.conv, s.zero, s.first_conv, c * static_cast<double>(s.within1),
             c * static_cast<double>(s.within2), z, plan.describe(), same);
  return 1;
}

void report(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open");
  std::string line;
  int lineno = 0, shown = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty()) continue;
    const std::string where = fmt::format("{}:{}", path, lineno);
    const auto r = nlohmann::json::parse(line, nullptr, false);
    if (r.is_discarded()) throw std::runtime_error(where + ": not JSON");
    try {
      shown += report_record(r, where, shown == 0);
    } catch (const nlohmann::json::exception& e) { // a field missing or of the wrong type
      throw std::runtime_error(where + ": " + e.what());
    }
  }
  if (shown == 0) fmt::print("{}: no fused records with a work order\n", path);
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fmt::print(stderr, "usage: fused-plan-report RECORDS.jsonl [...]\n");
    return 2;
  }
  fmt::print(
      "Work order of the fused kernel rebuilt on the host at each record's grid; '<1 win' and '<2 win': "
      "tiles less than one or two grids of items after the last statistics item they wait for; 'zero 1st': "
      "zero chunks placed before half of the tiles.\n");
  try {
    for (int i = 1; i < argc; ++i)
      report(argv[i]);
  } catch (const std::exception& e) {
    fmt::print(stderr, "fused-plan-report: {}\n", e.what());
    return 1;
  }
  return 0;
}
