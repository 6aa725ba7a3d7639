#pragma once
// The leaderboard model (SPEC §7): records in, leaderboard.json's document out. The Markdown and
// HTML writers read only this document, so the three outputs always agree.
#include "harness/leaderboard/merge.h"
#include "harness/leaderboard/rules.h"

#include <nlohmann/json.hpp>

namespace mtabench::leaderboard {

inline constexpr const char* kLeaderboardSchema = "mtabench-leaderboard";
inline constexpr int kLeaderboardSchemaVersion = 1;

nlohmann::json build_leaderboard(const MergedRecords& in, const Rules& rules);

}  // namespace mtabench::leaderboard
