#pragma once
// Writes the leaderboard's files into a folder, each atomically: leaderboard.json,
// LEADERBOARD.md, index.html and plots/<id>.svg (the plots LEADERBOARD.md links to).
#include <nlohmann/json.hpp>

#include <filesystem>
#include <vector>

namespace mtabench::leaderboard {

// Returns the paths written.
std::vector<std::filesystem::path> write_leaderboard_outputs(const std::filesystem::path& dir,
                                                             const nlohmann::json& doc);

}  // namespace mtabench::leaderboard
