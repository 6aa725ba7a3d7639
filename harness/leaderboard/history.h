#pragma once
// The record history of one board: eligible records in (timestamp, sha256) order against the
// holder of the moment. The first becomes the holder; a later record takes the record only when it
// is faster beyond noise ("taken"); a faster record within noise is listed as "held".
#include "harness/leaderboard/record_view.h"
#include "harness/leaderboard/rules.h"

#include <nlohmann/json.hpp>

#include <vector>

namespace mtabench::leaderboard {

// `eligible[i]` says whether records[i] is eligible; `holder_out` receives the final holder
// (nullptr when no record is eligible).
nlohmann::json build_history(const std::vector<RecordView>& records, const std::vector<bool>& eligible,
                             const Rules& rules, const RecordView** holder_out);

}  // namespace mtabench::leaderboard
