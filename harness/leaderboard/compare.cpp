#include "harness/leaderboard/compare.h"

#include "harness/leaderboard/eligibility.h"
#include "harness/leaderboard/format.h"
#include "harness/leaderboard/record_view.h"
#include "harness/leaderboard/significance.h"

#include <fmt/core.h>

#include <cmath>
#include <map>
#include <set>
#include <tuple>

namespace mtabench::leaderboard {

using json = nlohmann::json;

namespace {

using CaseKey = std::tuple<std::string, std::string, std::string>;  // identity, implementation, hardware key

// One side's records of a case: the latest (records arrive sorted by provenance.timestamp_utc,
// then record_sha256), how many there were, how many share the latest one's second (its
// timestamp has whole seconds: one run can write several records of one case in the same second,
// e.g. two workload names with one identity, and then the order among them is the hashes', not
// the measurements'), and the workload names they carry.
struct CaseRecords {
  RecordView latest;
  std::size_t records = 0, same_second = 0;
  std::set<std::string> names;
};

std::map<CaseKey, CaseRecords> latest_per_case(const MergedRecords& set) {
  std::map<CaseKey, CaseRecords> out;
  for (const auto& r : set.records) {
    RecordView v = view_record(r);
    CaseRecords& slot = out[{v.identity, v.impl, v.hardware_key}];
    slot.records += 1;
    slot.same_second = slot.records > 1 && slot.latest.timestamp == v.timestamp ? slot.same_second + 1 : 1;
    slot.names.insert(r["workload"]["name"].get<std::string>());
    slot.latest = v;
  }
  return out;
}

json side_json(const CaseRecords& c) {
  const RecordView& v = c.latest;
  json j{{"outcome", v.outcome},
         {"record_sha256", v.sha},
         {"run_id", v.run_id},
         {"workload_name", (*v.json)["workload"]["name"]},
         {"observed", v.timestamp},
         {"trust", v.trust},
         {"records", c.records},
         {"records_in_latest_second", c.same_second}};
  if (v.timing) {
    j["median_s"] = v.timing->median_s;
    j["ci95_low_s"] = v.timing->ci_low_s ? json(*v.timing->ci_low_s) : json(nullptr);
    j["ci95_high_s"] = v.timing->ci_high_s ? json(*v.timing->ci_high_s) : json(nullptr);
    j["n"] = v.timing->n ? json(*v.timing->n) : json(nullptr);
    j["raw_samples"] = v.timing->samples_s.size();
    j["protocol"] = v.timing->protocol;
  } else {
    j["median_s"] = nullptr;
  }
  return j;
}

// The verdicts, most severe first: the order of the report's rows and summary.
constexpr const char* kVerdicts[] = {"failing",     "slower",    "unsure", "faster", "same",
                                     "now-passing", "not-timed", "added",  "removed"};

int severity(const std::string& verdict) {
  int i = 0;
  for (const char* v : kVerdicts) {
    if (verdict == v) return i;
    ++i;
  }
  return i;
}

std::string verdict_for(const Difference& d, double threshold_pct) {
  const bool beyond = std::fabs(d.ratio - 1) * 100 > threshold_pct;
  if (!beyond) return "same";
  if (!d.significant) return "unsure";
  return d.ratio > 1 ? "slower" : "faster";
}

}  // namespace

json compare_records(const MergedRecords& base, const MergedRecords& next, const CompareOptions& opt) {
  const auto b = latest_per_case(base), n = latest_per_case(next);
  std::map<CaseKey, bool> keys;
  for (const auto& kv : b) keys[kv.first] = true;
  for (const auto& kv : n) keys[kv.first] = true;
  json cases = json::array();
  for (const auto& kv : keys) {
    const CaseKey& key = kv.first;
    const auto bi = b.find(key), ni = n.find(key);
    const RecordView& any = ni != n.end() ? ni->second.latest : bi->second.latest;
    const json& w = (*any.json)["workload"];
    // Every name the case's records carry on either side (one identity may have several, as the
    // seed and the sweep's seq 32 do), as the leaderboard names its boards.
    std::set<std::string> names;
    if (bi != b.end()) names.insert(bi->second.names.begin(), bi->second.names.end());
    if (ni != n.end()) names.insert(ni->second.names.begin(), ni->second.names.end());
    json c{{"workload",
            {{"identity", std::get<0>(key)},
             {"name", workload_names(names)},
             {"seq", w["seq"]},
             {"shape", fmt::format("k {} · seq {} · batch {} · heads {}/{} · {}", w["k"].get<int>(),
                                   w["seq"].get<std::int64_t>(), w["batch"].get<std::int64_t>(),
                                   w["heads_in"].get<std::int64_t>(), w["heads_out"].get<std::int64_t>(),
                                   w["dtype"].get<std::string>())}}},
           {"implementation", std::get<1>(key)},
           {"hardware_key", std::get<2>(key)},
           {"hardware", hardware_label(*any.json)},
           {"base", bi != b.end() ? side_json(bi->second) : json(nullptr)},
           {"new", ni != n.end() ? side_json(ni->second) : json(nullptr)},
           {"ratio", nullptr},
           {"evidence", nullptr}};
    std::string verdict;
    if (bi == b.end())
      verdict = "added";
    else if (ni == n.end())
      verdict = "removed";
    else {
      const RecordView &bv = bi->second.latest, &nv = ni->second.latest;
      const bool bt = bv.passed_with_timing(), nt = nv.passed_with_timing();
      if (bt && nt) {
        const Difference d = compare_timings(*bv.timing, *nv.timing, opt.alpha);
        verdict = verdict_for(d, opt.threshold_pct);
        c["ratio"] = round_sig(d.ratio);
        c["evidence"] = evidence_json(d);
      } else if (bt) {
        verdict = "failing";
      } else if (nt) {
        verdict = "now-passing";
      } else {
        verdict = "not-timed";
      }
    }
    c["verdict"] = verdict;
    cases.push_back(std::move(c));
  }
  std::stable_sort(cases.begin(), cases.end(), [](const json& x, const json& y) {
    return severity(x["verdict"].get<std::string>()) < severity(y["verdict"].get<std::string>());
  });
  json summary = json::object();
  for (const char* v : kVerdicts) summary[v] = 0;
  for (const auto& c : cases)
    summary[c["verdict"].get<std::string>()] = summary[c["verdict"].get<std::string>()].get<int>() + 1;
  auto side = [](const MergedRecords& m, const std::vector<std::string>& paths) {
    return json{{"paths", paths},
                {"unique_records", m.records.size()},
                {"duplicates_merged", m.duplicates},
                {"problems", m.problems}};
  };
  return {{"schema", "mtabench-compare"},
          {"schema_version", 1},
          {"threshold_pct", opt.threshold_pct},
          {"alpha", opt.alpha},
          {"rules",
           {fmt::format(
                "Cases match by (workload identity, implementation name, hardware key); with several records "
                "of a case on one side, the latest (provenance.timestamp_utc) is used; among records of the "
                "same second, the one with the largest record_sha256 (marked †: which of them was measured "
                "last is not recorded). Ratio = median(NEW) / median(BASE)."),
            fmt::format(
                "Significant: with raw samples on both sides (at least {} each), a two-sided Mann-Whitney U "
                "test (normal approximation, tie and continuity corrections) gives p < {:g}, and the ratio's "
                "interval is a percentile bootstrap (1000 resamples, fixed seed); without them, the two 95% "
                "confidence intervals of the median do not overlap, and the ratio's interval is "
                "[low(NEW)/high(BASE), high(NEW)/low(BASE)].",
                kMinSamplesForRankTest, opt.alpha),
            fmt::format(
                "slower/faster: significant and the ratio beyond ±{:g}%; same: the ratio within ±{:g}% "
                "(significant or not); unsure: beyond ±{:g}% but not significant; failing: BASE passed and "
                "NEW did not. Exit status 1 when a case is slower or failing.",
                opt.threshold_pct, opt.threshold_pct, opt.threshold_pct)}},
          {"base", side(base, opt.base_paths)},
          {"new", side(next, opt.new_paths)},
          {"summary", summary},
          {"cases", cases}};
}

int compare_exit_code(const json& doc) {
  return doc["summary"]["slower"].get<int>() > 0 || doc["summary"]["failing"].get<int>() > 0 ? 1 : 0;
}

std::string compare_markdown(const json& doc) {
  std::string o = "# mtabench compare\n\n";
  auto paths = [](const json& side) {
    std::string s;
    for (const auto& p : side["paths"]) s += (s.empty() ? "" : ", ") + p.get<std::string>();
    return s;
  };
  o += fmt::format("BASE: {} ({} records) · NEW: {} ({} records) · threshold ±{:g}% · α = {:g}\n\n",
                   paths(doc["base"]), doc["base"]["unique_records"].dump(), paths(doc["new"]),
                   doc["new"]["unique_records"].dump(), doc["threshold_pct"].get<double>(),
                   doc["alpha"].get<double>());
  std::string summary;
  for (const char* verdict : kVerdicts) {  // most severe first
    const int count = doc["summary"][verdict].get<int>();
    if (count > 0) summary += fmt::format("{}{} {}", summary.empty() ? "" : " · ", count, verdict);
  }
  o += "**Summary:** " + (summary.empty() ? std::string("no cases") : summary) + "\n\n";
  o +=
      "| Verdict | Workload | Implementation | Hardware | BASE median | NEW median | NEW/BASE | Evidence |\n";
  o += "|---|---|---|---|---|---|---|---|\n";
  auto median = [](const json& side) {
    if (side.is_null()) return std::string("—");
    const std::string tied = side.value("records_in_latest_second", 1) > 1 ? " †" : "";
    if (side["median_s"].is_null()) return side["outcome"].get<std::string>() + tied;
    return format_seconds(side["median_s"].get<double>()) +
           (side["n"].is_number() ? " (n " + side["n"].dump() + ")" : "") + tied;
  };
  for (const auto& c : doc["cases"]) {
    std::string evidence = "—";
    if (c["evidence"].is_object()) {
      const json& e = c["evidence"];
      const std::string m = e["method"].get<std::string>();
      evidence = m == "mann-whitney-u" ? fmt::format("Mann-Whitney U p = {:.2g}", e["p_value"].get<double>())
                 : m == "median-ci"
                     ? (e["significant"].get<bool>() ? "median CIs apart" : "median CIs overlap")
                     : "no spread known";
      if (e["ratio_low"].is_number())
        evidence +=
            fmt::format("; 95% {:.4g}–{:.4g}", e["ratio_low"].get<double>(), e["ratio_high"].get<double>());
    }
    o += fmt::format("| **{}** | {} · {} | {} | {} | {} | {} | {} | {} |\n", c["verdict"].get<std::string>(),
                     markdown_cell(c["workload"]["name"].get<std::string>()),
                     c["workload"]["shape"].get<std::string>(),
                     markdown_cell(c["implementation"].get<std::string>()),
                     markdown_cell(c["hardware"].get<std::string>()), median(c["base"]), median(c["new"]),
                     c["ratio"].is_number() ? fmt::format("{:.4f} ({})", c["ratio"].get<double>(),
                                                          format_signed_pct(c["ratio"].get<double>() - 1))
                                            : "—",
                     evidence);
  }
  o += "\n";
  for (const auto& r : doc["rules"]) o += "- " + r.get<std::string>() + "\n";
  for (const char* s : {"base", "new"})
    for (const auto& p : doc[s]["problems"])
      o += fmt::format("- input problem ({}): {}\n", s, markdown_cell(p.get<std::string>()));
  return o;
}

}  // namespace mtabench::leaderboard
