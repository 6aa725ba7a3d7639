#pragma once
// Scaling by seq: per (hardware, workload family = the identity fields except seq), each
// implementation's entry median against seq, and the floor curve. Built from the boards, so the
// figures are the same ones the boards show.
#include <nlohmann/json.hpp>

namespace mtabench::leaderboard {

nlohmann::json build_scaling(const nlohmann::json& boards);

}  // namespace mtabench::leaderboard
