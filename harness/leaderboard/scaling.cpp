#include "harness/leaderboard/scaling.h"

#include <fmt/core.h>

#include <map>
#include <set>

namespace mtabench::leaderboard {

using json = nlohmann::json;

json build_scaling(const json& boards) {
  struct Group {
    json hardware, family;
    std::set<std::int64_t> seqs;
    json floor = json::array();
    std::map<std::string, json> series;  // implementation -> points
    std::map<std::string, std::string> language;
  };
  std::map<std::pair<std::string, std::string>, Group> groups;  // (hardware key, family)
  for (const auto& b : boards) {
    const json& w = b["workload"];
    Group& g = groups[{b["hardware"]["key"].get<std::string>(), w["family"].get<std::string>()}];
    g.hardware = {{"key", b["hardware"]["key"]}, {"label", b["hardware"]["label"]}};
    g.family = {{"label", w["family"]}, {"semantics", w["semantics"]}, {"k", w["k"]},
                {"batch", w["batch"]},  {"heads_in", w["heads_in"]},   {"heads_out", w["heads_out"]},
                {"dtype", w["dtype"]}};
    const std::int64_t seq = w["seq"].get<std::int64_t>();
    g.seqs.insert(seq);
    if (b["floor"].is_object())
      g.floor.push_back({{"seq", seq},
                         {"seconds", b["floor"]["seconds"]},
                         {"model", b["floor"]["model"]},
                         {"ceilings", b["floor"]["ceilings"]}});
    for (const auto& e : b["entries"]) {
      if (e["rank"].is_null()) continue;  // ineligible entries are not plotted
      const std::string name = e["implementation"]["name"].get<std::string>();
      g.language[name] = e["implementation"]["language"].get<std::string>();
      json& pts = g.series[name];
      if (pts.is_null()) pts = json::array();
      pts.push_back({{"seq", seq},
                     {"median_s", e["timing"]["median_s"]},
                     {"n", e["timing"]["n"]},
                     {"status", e["status"]},
                     {"trust", e["trust"]},
                     {"board", b["id"]}});
    }
  }
  json out = json::array();
  for (auto& [key, g] : groups) {
    json series = json::array();
    for (auto& [name, pts] : g.series)
      series.push_back({{"implementation", name}, {"language", g.language[name]}, {"points", pts}});
    out.push_back({{"id", fmt::format("scaling-{}", out.size() + 1)},
                   {"hardware", g.hardware},
                   {"family", g.family},
                   {"seqs", g.seqs},
                   {"floor", g.floor},
                   {"series", series}});
  }
  return out;
}

}  // namespace mtabench::leaderboard
