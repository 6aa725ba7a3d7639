#pragma once
// index.html from leaderboard.json's document: one self-contained page (inline CSS and SVG, no
// scripts, no external assets), readable offline and without JavaScript.
#include <nlohmann/json.hpp>

#include <string>

namespace mtabench::leaderboard {

std::string leaderboard_html(const nlohmann::json& doc);

}  // namespace mtabench::leaderboard
