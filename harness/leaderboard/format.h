#pragma once
// Text helpers shared by the leaderboard and compare writers: times with units, ratios, UTC
// timestamps, escaping for Markdown tables and HTML.
#include <cstdint>
#include <optional>
#include <set>
#include <string>

namespace mtabench::leaderboard {

// "35.3 ns", "17.40 µs", "246.8 µs", "2.460 ms", "1.20 s": the unit that reads best, 4 significant digits.
std::string format_seconds(double s);
// "14.18×"
std::string format_ratio(double r);
// "+3.2%" / "-12.0%"
std::string format_signed_pct(double fraction);
// "2.1%"
std::string format_pct(double fraction);

// Seconds since 1970 of "YYYY-MM-DD" or "YYYY-MM-DDTHH:MM:SSZ"; nullopt if neither.
std::optional<std::int64_t> parse_utc(const std::string& text);
std::string date_part(const std::string& timestamp);  // "2025-04-28T10:00:00Z" -> "2025-04-28"

// Rounds to `digits` significant digits: derived figures in leaderboard.json are rounded so that
// golden files do not depend on the last bits of a libm.
double round_sig(double x, int digits = 6);

std::string html_escape(const std::string& s);
std::string markdown_cell(const std::string& s);    // escapes | and turns newlines into spaces
std::string short_hash(const std::string& sha256);  // first 12 hex digits and an ellipsis
// A workload named by all its records' names: "seed / sweep-seq32" (one identity, several names).
std::string workload_names(const std::set<std::string>& names);

}  // namespace mtabench::leaderboard
