#include "harness/leaderboard/record_view.h"

#include "harness/leaderboard/format.h"

#include <fmt/core.h>

namespace mtabench::leaderboard {

nlohmann::json FloorView::to_json() const {
  return {{"model", model}, {"ceilings", ceilings}, {"seconds", seconds}, {"bound_by", bound_by}};
}

namespace {
std::optional<FloorView> floor_of(const nlohmann::json& pair, const char* model, const char* kind) {
  if (!pair.is_object() || !pair.contains(kind) || !pair[kind].is_object()) return std::nullopt;
  const auto& f = pair[kind];
  if (!f.contains("seconds") || !f["seconds"].is_number()) return std::nullopt;
  return FloorView{model, kind, f.value("bound_by", ""), f["seconds"].get<double>()};
}
}  // namespace

RecordView view_record(const nlohmann::json& r) {
  RecordView v;
  v.json = &r;
  v.sha = r["record_sha256"].get<std::string>();
  v.run_id = r["run_id"].get<std::string>();
  v.identity = r["workload"]["identity"].get<std::string>();
  v.hardware_key = r["provenance"]["hardware_key"].get<std::string>();
  v.impl = r["implementation"]["name"].get<std::string>();
  v.language = r["implementation"]["language"].get<std::string>();
  v.trust = r["trust"]["level"].get<std::string>();
  v.outcome = r["outcome"].get<std::string>();
  v.timestamp = r["provenance"]["timestamp_utc"].get<std::string>();
  v.time = parse_utc(v.timestamp).value_or(0);
  v.timing = timing_view(r);
  const auto& fb = r["floor"];
  if (fb.is_object()) {
    v.floor = floor_of(fb["headroom_v2"], "headroom-v2", "measured");
    if (!v.floor) v.floor = floor_of(fb["headroom_v2"], "headroom-v2", "datasheet");
    v.floor_v1 = floor_of(fb["headroom_v1"], "headroom-v1", "datasheet");
    v.impossible = fb.value("impossible", false);
  }
  return v;
}

std::string hardware_label(const nlohmann::json& r) {
  const auto& p = r["provenance"];
  std::string label;
  if (p.contains("device") && p["device"].is_object()) {
    label = p["device"]["name"].get<std::string>();
  } else if (p.contains("host") && p["host"].is_object() && p["host"].contains("cpu")) {
    label = "CPU " + p["host"]["cpu"].get<std::string>();
    if (p["host"].contains("cpu_threads"))
      label += fmt::format(" ({} threads)", p["host"]["cpu_threads"].dump());
  } else {
    label = p["hardware_key"].get<std::string>();
  }
  if (p.contains("environment") && p["environment"].is_string())
    label += " · " + p["environment"].get<std::string>();
  return label;
}

}  // namespace mtabench::leaderboard
