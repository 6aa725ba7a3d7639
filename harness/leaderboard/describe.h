#pragma once
// Phrases the Markdown and HTML pages share, built from leaderboard.json's pieces, so the two
// pages say the same thing about every figure (how it was measured, against which floor).
#include <nlohmann/json.hpp>

#include <string>

namespace mtabench::leaderboard {

// "10.5 µs" or "—"
std::string median_text(const nlohmann::json& timing);
// "9.80–11.2 µs" or "—"
std::string spread_text(const nlohmann::json& timing);
std::string n_text(const nlohmann::json& timing);
std::string cv_text(const nlohmann::json& timing);
// "mtabench-median-v1, device-events"
std::string protocol_text(const nlohmann::json& timing);
// "312.2× (headroom-v2, measured)" or "—"
std::string over_floor_text(const nlohmann::json& ratio, const nlohmann::json& floor);
// "headroom-v2 33.5 ns, bound by memory, datasheet ceilings"
std::string floor_text(const nlohmann::json& floor);
// "Mann-Whitney U p = 3.1e-09; ratio 0.52 (95% 0.51–0.53)"
std::string evidence_text(const nlohmann::json& evidence);
// "fused: 10.5 µs median of 1234 samples (protocol), 312× floor, reproduced, observed 2025-05-30"
std::string record_sentence(const nlohmann::json& board);
std::string ratio_text(const nlohmann::json& r);  // "1.00×" or "—"
// "median of 40, mtabench-median-v1" / "median, Liger-Kernel benchmark scripts (...)": how a
// board's record or best-known figure was measured.
std::string measured_how(const nlohmann::json& summary);

}  // namespace mtabench::leaderboard
