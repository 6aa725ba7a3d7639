#pragma once
// The hand-made record sets behind the leaderboard and compare golden files. Each record is built
// here field by field and sealed with seal_record, so the committed files carry real hashes; the
// test GoldenRecords.CommittedFilesAreCurrent keeps tests/golden/leaderboard/ in step with this
// code (MTABENCH_UPDATE_GOLDEN=1 rewrites them).
#include <nlohmann/json.hpp>

#include <vector>

namespace mtabench::golden {

// Reference time of the golden leaderboard: its stale marks depend on it.
inline constexpr const char* kGoldenNow = "2025-06-01T00:00:00Z";

// The leaderboard set, one board per story (see golden_records.cpp):
//   H200, seed workload: cudnn holds first; fused takes the record (beyond noise); fused is
//   reproduced by a second run; fused-v2 is faster within noise (held); a high-CV record and an
//   impossible record (below the floor) and an incorrect one are excluded; a reported record is
//   faster but never the record; cudnn is stale.
//   H200, seq 128 and 512 (scaling by seq; records without raw samples: CI path).
//   A CPU board (no floor).
std::vector<nlohmann::json> leaderboard_records();

// Two runs for compare: every verdict once (same, slower, faster, unsure, same-but-significant,
// CI-only slower, failing, added, removed); in the new run, one case twice in the same second
// under two workload names.
std::vector<nlohmann::json> compare_base();
std::vector<nlohmann::json> compare_new();

}  // namespace mtabench::golden
