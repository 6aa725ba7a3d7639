#pragma once
// The scaling-by-seq plot as one SVG element: log-log axes (seq; median time per call), labelled,
// a line per implementation, the floor curve dashed, a legend. Self-contained: no fonts, scripts
// or external references, so it can be inlined in index.html or saved as a file.
#include <nlohmann/json.hpp>

#include <string>

namespace mtabench::leaderboard {

// `group` is one element of leaderboard.json's "scaling" array.
std::string scaling_svg(const nlohmann::json& group);

// The colour of the i-th implementation of a plot (also used by the HTML table's swatches).
const char* series_colour(std::size_t i);

}  // namespace mtabench::leaderboard
