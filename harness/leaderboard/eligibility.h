#pragma once
// Which records may be the record (SPEC §7), and when two timings differ beyond noise.
#include "harness/leaderboard/record_view.h"
#include "harness/leaderboard/rules.h"
#include "harness/leaderboard/significance.h"

#include <nlohmann/json.hpp>

#include <string>

namespace mtabench::leaderboard {

// Why a record cannot be the record; empty when it is eligible.
std::string ineligibility(const RecordView& r, const Rules& rules);

// Whether a difference is beyond noise: statistically significant and larger than rules.noise_pct.
bool beyond_noise(const Difference& d, const Rules& rules);

// The evidence of a comparison as leaderboard.json and compare's JSON give it.
nlohmann::json evidence_json(const Difference& d);

}  // namespace mtabench::leaderboard
