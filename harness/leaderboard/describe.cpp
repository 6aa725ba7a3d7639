#include "harness/leaderboard/describe.h"

#include "harness/leaderboard/format.h"

#include <fmt/core.h>

namespace mtabench::leaderboard {

using json = nlohmann::json;

std::string median_text(const json& t) {
  return t.is_object() ? format_seconds(t["median_s"].get<double>()) : "—";
}

std::string spread_text(const json& t) {
  if (!t.is_object() || !t["p20_s"].is_number() || !t["p80_s"].is_number()) return "—";
  return format_seconds(t["p20_s"].get<double>()) + " – " + format_seconds(t["p80_s"].get<double>());
}

std::string n_text(const json& t) { return t.is_object() && t["n"].is_number() ? t["n"].dump() : "—"; }

std::string cv_text(const json& t) {
  return t.is_object() && t["cv"].is_number() ? format_pct(t["cv"].get<double>()) : "—";
}

std::string protocol_text(const json& t) {
  if (!t.is_object()) return "—";
  std::string s = t["protocol"].get<std::string>();
  const std::string mode = t["mode"].get<std::string>();
  if (!mode.empty() && mode != "reported") s += ", " + mode;
  return s;
}

std::string over_floor_text(const json& ratio, const json& floor) {
  if (!ratio.is_number() || !floor.is_object()) return "—";
  return fmt::format("{} ({}, {})", format_ratio(ratio.get<double>()), floor["model"].get<std::string>(),
                     floor["ceilings"].get<std::string>());
}

std::string floor_text(const json& f) {
  if (!f.is_object()) return "no floor (a host implementation, or a GPU outside the datasheet table)";
  return fmt::format("{} {}, bound by {}, {} ceilings", f["model"].get<std::string>(),
                     format_seconds(f["seconds"].get<double>()), f["bound_by"].get<std::string>(),
                     f["ceilings"].get<std::string>());
}

std::string evidence_text(const json& e) {
  if (!e.is_object()) return "—";
  std::string s;
  const std::string m = e["method"].get<std::string>();
  if (m == "mann-whitney-u")
    s = fmt::format("Mann-Whitney U p = {:.2g}", e["p_value"].get<double>());
  else if (m == "median-ci")
    s = e["significant"].get<bool>() ? "median CIs apart" : "median CIs overlap";
  else
    s = "no spread known";
  s += fmt::format("; ratio {:.4g}", e["ratio"].get<double>());
  if (e["ratio_low"].is_number())
    s += fmt::format(" (95% {:.4g}–{:.4g})", e["ratio_low"].get<double>(), e["ratio_high"].get<double>());
  return s;
}

std::string measured_how(const json& summary) {
  const std::string n = summary["n"].is_number() ? " of " + summary["n"].dump() : "";
  return "median" + n + ", " + summary["protocol"].get<std::string>();
}

std::string ratio_text(const json& r) { return r.is_number() ? format_ratio(r.get<double>()) : "—"; }

std::string record_sentence(const json& b) {
  const json& r = b["record"];
  const json* entry = nullptr;
  for (const auto& e : b["entries"])
    if (e["record_sha256"] == r["record_sha256"]) entry = &e;
  const json& t = (*entry)["timing"];
  std::string s = fmt::format(
      "{}, {} median of {} samples ({}); p20–p80 {}; CV {}", r["implementation"].get<std::string>(),
      format_seconds(r["median_s"].get<double>()), n_text(t), protocol_text(t), spread_text(t), cv_text(t));
  if (r["time_over_floor"].is_number())
    s += fmt::format("; {} the floor ({}, {} ceilings)", format_ratio(r["time_over_floor"].get<double>()),
                     r["floor"]["model"].get<std::string>(), r["floor"]["ceilings"].get<std::string>());
  s += fmt::format("; trust {}; observed {}{}", r["trust"].get<std::string>(),
                   date_part(r["observed"].get<std::string>()), r["stale"].get<bool>() ? " (stale)" : "");
  return s;
}

}  // namespace mtabench::leaderboard
