#pragma once
// LEADERBOARD.md from leaderboard.json's document. Plots are linked as plots/<id>.svg (written
// beside it by write_leaderboard_outputs).
#include <nlohmann/json.hpp>

#include <string>

namespace mtabench::leaderboard {

std::string leaderboard_markdown(const nlohmann::json& doc);

}  // namespace mtabench::leaderboard
