#pragma once
// Records in Google Benchmark's JSON format, written by Google Benchmark's own JSONReporter, so
// that its tools/compare.py can compare two mtabench runs. Each timed sample is one repetition
// (when raw samples were kept, `run --samples`), followed by median/mean/stddev aggregates.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace mtabench {
std::string records_to_gbench_json(const std::vector<nlohmann::json>& records);
}  // namespace mtabench
