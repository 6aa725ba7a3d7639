#pragma once
// One board: the records of one (workload identity, hardware key), turned into entries per
// implementation (ranked), the current record and its history, fastest by language, the floor,
// and the records that are not eligible.
#include "harness/leaderboard/record_view.h"
#include "harness/leaderboard/rules.h"

#include <nlohmann/json.hpp>

#include <vector>

namespace mtabench::leaderboard {

// `records` are the board's records in (timestamp, sha256) order.
nlohmann::json build_board(const std::vector<RecordView>& records, const Rules& rules);

}  // namespace mtabench::leaderboard
