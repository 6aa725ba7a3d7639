#include "harness/leaderboard/eligibility.h"

#include "harness/leaderboard/format.h"
#include "harness/nvml_probe.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

namespace mtabench::leaderboard {

using json = nlohmann::json;

namespace {
json rounded(std::optional<double> v) { return v ? json(round_sig(*v)) : json(nullptr); }

// Time-slicing with another process need not raise the CV (the H200 measured a reference at twice
// its quiet time with CV 6%), so NVML's count in the record decides: more than the measuring
// process, before or after, and the record is not eligible.
std::string shared_gpu(const json& rec) {
  const int others = other_gpu_processes(rec);
  if (others == 0) return "";
  return fmt::format("measured on a shared GPU: {} other process(es) held a CUDA context on it (NVML)", others);
}
}  // namespace

std::string ineligibility(const RecordView& r, const Rules& rules) {
  if (r.outcome != "passed") {
    const std::string reason = (*r.json)["reason"].get<std::string>();
    return "outcome " + r.outcome + (reason.empty() ? "" : ": " + reason);
  }
  if (r.reported()) return "reported by a source: shown and marked, never the record";
  if (!r.timing) return "no timing";
  if (r.impossible)
    return fmt::format("below its floor (impossible): median {} < headroom-v2 floor {} ({} ceilings)",
                       format_seconds(r.timing->median_s), r.floor ? format_seconds(r.floor->seconds) : "?",
                       r.floor ? r.floor->ceilings : "?");
  if (const std::string shared = shared_gpu(*r.json); !shared.empty()) return shared;
  if (!r.timing->cv) return "no coefficient of variation in the record";
  if (!(*r.timing->cv < rules.max_cv))
    return fmt::format("CV {} is not under the bound {}", format_pct(*r.timing->cv),
                       format_pct(rules.max_cv));
  return "";
}

bool beyond_noise(const Difference& d, const Rules& rules) {
  return d.significant && std::fabs(d.ratio - 1) * 100 > rules.noise_pct;
}

json evidence_json(const Difference& d) {
  return {{"method", d.method},
          {"ratio", round_sig(d.ratio)},
          {"ratio_low", rounded(d.ratio_low)},
          {"ratio_high", rounded(d.ratio_high)},
          {"p_value", rounded(d.p_value)},
          {"significant", d.significant}};
}

}  // namespace mtabench::leaderboard
