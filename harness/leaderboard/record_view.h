#pragma once
// The fields of a record that the leaderboard and compare read, pulled out once.
#include "harness/leaderboard/significance.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace mtabench::leaderboard {

// One floor of a record: model (headroom-v1/-v2), ceilings (measured/datasheet), seconds, bound.
struct FloorView {
  std::string model, ceilings, bound_by;
  double seconds = 0;
  nlohmann::json to_json() const;
};

struct RecordView {
  const nlohmann::json* json = nullptr;
  std::string sha, run_id, identity, hardware_key, impl, language, trust, outcome, timestamp;
  std::int64_t time = 0;  // timestamp as seconds since 1970
  std::optional<TimingView> timing;
  std::optional<FloorView> floor;     // headroom-v2: measured ceilings if present, else datasheet
  std::optional<FloorView> floor_v1;  // headroom-v1 from the datasheet (the public page's rule)
  bool impossible = false;
  bool reported() const { return trust == "reported"; }
  bool passed_with_timing() const { return outcome == "passed" && timing.has_value(); }
};

RecordView view_record(const nlohmann::json& record);

// Display label of the record's hardware: GPU name (or CPU model), plus the environment label.
std::string hardware_label(const nlohmann::json& record);

}  // namespace mtabench::leaderboard
