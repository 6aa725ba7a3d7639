#include "harness/leaderboard/model.h"

#include "harness/leaderboard/board.h"
#include "harness/leaderboard/format.h"
#include "harness/leaderboard/record_view.h"
#include "harness/leaderboard/scaling.h"

#include <fmt/core.h>

#include <map>
#include <set>
#include <tuple>

namespace mtabench::leaderboard {

using json = nlohmann::json;

namespace {

std::string family_label(const json& w) {
  std::string s = fmt::format("k {} · batch {} · heads {}/{} · {}", w["k"].get<int>(),
                              w["batch"].get<std::int64_t>(), w["heads_in"].get<std::int64_t>(),
                              w["heads_out"].get<std::int64_t>(), w["dtype"].get<std::string>());
  if (w["semantics"] != "liger-mta-fwd-v1") s += " · " + w["semantics"].get<std::string>();
  return s;
}

json workload_json(const std::vector<RecordView>& recs) {
  const json& w = (*recs.front().json)["workload"];
  std::set<std::string> names;
  for (const auto& r : recs) names.insert((*r.json)["workload"]["name"].get<std::string>());
  return {{"identity", w["identity"]},
          {"name", workload_names(names)},
          {"semantics", w["semantics"]},
          {"k", w["k"]},
          {"seq", w["seq"]},
          {"batch", w["batch"]},
          {"heads_in", w["heads_in"]},
          {"heads_out", w["heads_out"]},
          {"dtype", w["dtype"]},
          {"shape", fmt::format("k {} · seq {} · batch {} · heads {}/{} · {}", w["k"].get<int>(),
                                w["seq"].get<std::int64_t>(), w["batch"].get<std::int64_t>(),
                                w["heads_in"].get<std::int64_t>(), w["heads_out"].get<std::int64_t>(),
                                w["dtype"].get<std::string>())},
          {"family", family_label(w)}};
}

json hardware_json(const RecordView& r) {
  const json& p = (*r.json)["provenance"];
  const bool gpu = p.contains("device") && p["device"].is_object();
  auto dev = [&](const char* k) { return gpu && p["device"].contains(k) ? p["device"][k] : json(nullptr); };
  return {{"key", r.hardware_key},
          {"label", hardware_label(*r.json)},
          {"kind", gpu ? "gpu" : "host"},
          {"name", dev("name")},
          {"sm_count", dev("sm_count")},
          {"memory_bytes", dev("memory_bytes")},
          {"power_limit_w", dev("power_limit_w")},
          {"environment", p.contains("environment") ? p["environment"] : json(nullptr)}};
}

}  // namespace

json build_leaderboard(const MergedRecords& in, const Rules& rules) {
  // Boards in a stable order: workload family, seq, hardware key.
  using BoardKey = std::tuple<std::string, std::int64_t, std::string, std::string>;
  std::map<BoardKey, std::vector<RecordView>> boards;
  for (const auto& r : in.records) {
    const RecordView v = view_record(r);
    const json& w = r["workload"];
    boards[{family_label(w), w["seq"].get<std::int64_t>(), v.hardware_key, v.identity}].push_back(v);
  }
  json boards_json = json::array();
  std::set<std::string> impls;
  std::size_t eligible_runs = 0;
  for (const auto& [key, recs] : boards) {
    json b = build_board(recs, rules);
    b["id"] = fmt::format("board-{}", boards_json.size() + 1);
    b["workload"] = workload_json(recs);
    b["hardware"] = hardware_json(recs.front());
    eligible_runs += b["eligible_runs"].get<std::size_t>();
    for (const auto& r : recs) impls.insert(r.impl);
    boards_json.push_back(std::move(b));
  }
  return {
      {"schema", kLeaderboardSchema},
      {"schema_version", kLeaderboardSchemaVersion},
      {"generated_utc", rules.now_utc},
      {"rules", rules_json(rules)},
      {"inputs",
       {{"records_read", in.read},
        {"unique_records", in.records.size()},
        {"duplicates_merged", in.duplicates},
        {"problems", in.problems}}},
      {"totals",
       {{"boards", boards_json.size()}, {"implementations", impls.size()}, {"eligible_runs", eligible_runs}}},
      {"boards", boards_json},
      {"scaling", build_scaling(boards_json)}};
}

}  // namespace mtabench::leaderboard
