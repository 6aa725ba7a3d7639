#include "harness/leaderboard/board.h"

#include "harness/leaderboard/eligibility.h"
#include "harness/leaderboard/history.h"

#include "harness/leaderboard/format.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace mtabench::leaderboard {

using json = nlohmann::json;

namespace {

json rounded(std::optional<double> v) { return v ? json(round_sig(*v)) : json(nullptr); }
json exact(std::optional<double> v) { return v ? json(*v) : json(nullptr); }

json timing_json(const RecordView& r) {
  if (!r.timing) return nullptr;
  const TimingView& t = *r.timing;
  const json& tj = (*r.json)["timing"];
  return {{"median_s", t.median_s},
          {"p20_s", exact(t.p20_s)},
          {"p80_s", exact(t.p80_s)},
          {"ci95_low_s", exact(t.ci_low_s)},
          {"ci95_high_s", exact(t.ci_high_s)},
          {"cv", exact(t.cv)},
          {"n", t.n ? json(*t.n) : json(nullptr)},
          {"protocol", t.protocol},
          {"mode", t.mode},
          {"stop_reason", tj.value("stop_reason", "")},
          {"raw_samples", t.samples_s.size()}};
}

std::optional<double> over_floor(const RecordView& r) {
  if (!r.timing || !r.floor || r.floor->seconds <= 0) return std::nullopt;
  return r.timing->median_s / r.floor->seconds;
}

json floor_json(const std::optional<FloorView>& f) {
  if (!f) return nullptr;
  return f->to_json();
}

// The lowest median; the earliest record on a tie (records come in time order).
const RecordView* fastest(const std::vector<const RecordView*>& v) {
  const RecordView* best = nullptr;
  for (const auto* r : v)
    if (r->timing && (!best || r->timing->median_s < best->timing->median_s)) best = r;
  return best;
}

struct ImplGroup {
  std::vector<const RecordView*> all, eligible, reported;
};

json implementation_json(const RecordView& r) {
  const json& i = (*r.json)["implementation"];
  json j{{"name", i["name"]},
         {"language", i["language"]},
         {"license", i["license"]},
         {"source", i["source"]},
         {"version", i["version"]}};
  j["install"] = i.contains("install") ? i["install"] : json(nullptr);
  return j;
}

}  // namespace

json build_board(const std::vector<RecordView>& records, const Rules& rules) {
  const std::int64_t now = parse_utc(rules.now_utc).value_or(0);
  std::vector<bool> eligible(records.size());
  std::map<std::string, ImplGroup> groups;
  std::size_t eligible_runs = 0, reported_runs = 0;
  std::string last_observed;
  json excluded = json::array();
  for (std::size_t i = 0; i < records.size(); ++i) {
    const RecordView& r = records[i];
    const std::string why = ineligibility(r, rules);
    eligible[i] = why.empty();
    ImplGroup& g = groups[r.impl];
    g.all.push_back(&r);
    if (eligible[i]) {
      g.eligible.push_back(&r);
      ++eligible_runs;
    } else if (r.reported() && r.passed_with_timing()) {
      g.reported.push_back(&r);
      ++reported_runs;
    } else {
      excluded.push_back({{"implementation", r.impl},
                          {"record_sha256", r.sha},
                          {"run_id", r.run_id},
                          {"observed", r.timestamp},
                          {"median_s", r.timing ? json(r.timing->median_s) : json(nullptr)},
                          {"reason", why}});
    }
    last_observed = std::max(last_observed, r.timestamp);
  }

  const RecordView* holder = nullptr;
  json history = build_history(records, eligible, rules, &holder);

  // One entry per implementation: the holder for the holder's implementation, else its fastest
  // eligible record, else its fastest reported record, else its latest record (with the reason).
  struct Entry {
    const RecordView* shown;
    std::string status;
    json j;
  };
  std::vector<Entry> entries;
  for (const auto& [name, g] : groups) {
    Entry e;
    if (holder && holder->impl == name)
      e = {holder, "record", {}};
    else if (const auto* b = fastest(g.eligible))
      e = {b, "eligible", {}};
    else if (const auto* rep = fastest(g.reported))
      e = {rep, "reported", {}};
    else
      e = {g.all.back(), "ineligible", {}};
    const RecordView& s = *e.shown;
    std::string last;
    for (const auto* r : g.all) last = std::max(last, r->timestamp);
    json reproduced = nullptr;
    if (e.status == "record" || e.status == "eligible") {
      for (const auto* other : g.eligible) {
        if (other->run_id == s.run_id) continue;
        const Difference d = compare_timings(*s.timing, *other->timing, rules.alpha);
        if (!beyond_noise(d, rules)) {
          reproduced = {{"run_id", other->run_id},
                        {"record_sha256", other->sha},
                        {"median_s", other->timing->median_s},
                        {"evidence", evidence_json(d)}};
          break;
        }
      }
    }
    const json& trust = (*s.json)["trust"];
    e.j = {{"implementation", implementation_json(s)},
           {"status", e.status},
           {"trust", !reproduced.is_null() ? "reproduced" : trust["level"].get<std::string>()},
           {"trust_source", trust["source"]},
           {"reason", e.status == "ineligible" ? ineligibility(s, rules) : ""},
           {"record_sha256", s.sha},
           {"run_id", s.run_id},
           {"outcome", s.outcome},
           {"observed", s.timestamp},
           {"last_observed", last},
           {"stale", now - parse_utc(last).value_or(0) > static_cast<std::int64_t>(rules.stale_days * 86400)},
           {"timing", timing_json(s)},
           {"floor", floor_json(s.floor)},
           {"time_over_floor", rounded(over_floor(s))},
           {"runs", g.all.size()},
           {"eligible_runs", g.eligible.size()},
           {"reproduced_with", reproduced}};
    entries.push_back(std::move(e));
  }

  // Ranked: the record first (by the rules it is #1), then eligible and reported entries by
  // median; ineligible entries follow, unranked.
  auto order = [](const Entry& e) { return e.status == "record" ? 0 : e.status == "ineligible" ? 2 : 1; };
  std::stable_sort(entries.begin(), entries.end(), [&](const Entry& a, const Entry& b) {
    if (order(a) != order(b)) return order(a) < order(b);
    if (order(a) == 2) return a.shown->impl < b.shown->impl;
    return a.shown->timing->median_s < b.shown->timing->median_s;
  });
  const Entry* first = entries.empty() || order(entries.front()) == 2 ? nullptr : &entries.front();
  const Entry* baseline = nullptr;
  for (const auto& e : entries)
    if (e.shown->impl == rules.baseline && order(e) < 2) baseline = &e;
  json entries_json = json::array();
  int rank = 0;
  for (auto& e : entries) {
    const bool ranked = order(e) < 2;
    e.j["rank"] = ranked ? json(++rank) : json(nullptr);
    e.j["vs_first"] = ranked && first
                          ? json(round_sig(e.shown->timing->median_s / first->shown->timing->median_s))
                          : json(nullptr);
    e.j["vs_baseline"] = ranked && baseline
                             ? json(round_sig(baseline->shown->timing->median_s / e.shown->timing->median_s))
                             : json(nullptr);
    entries_json.push_back(e.j);
  }

  // Fastest by language: eligible entries (the record included), else reported ones.
  // Fastest by language: the best-ranked eligible entry of each language (the record ranks first:
  // a faster entry within noise of it does not displace it), else the fastest reported entry.
  std::map<std::string, const Entry*> by_language;
  for (const bool reported : {false, true})
    for (const auto& e : entries) {
      const bool wanted =
          reported ? e.status == "reported" : (e.status == "record" || e.status == "eligible");
      if (wanted) by_language.emplace(e.shown->language, &e);  // entries are in rank order: the first stays
    }
  json fastest_by_language = json::array();
  for (const auto& [language, e] : by_language)
    fastest_by_language.push_back({{"language", language},
                                   {"implementation", e->shown->impl},
                                   {"median_s", e->shown->timing->median_s},
                                   {"status", e->status},
                                   {"trust", e->j["trust"]},
                                   {"rank", e->j["rank"]},
                                   {"vs_first", e->j["vs_first"]}});

  const Entry* best_known = nullptr;
  for (const auto& e : entries)
    if (order(e) < 2 && (!best_known || e.shown->timing->median_s < best_known->shown->timing->median_s))
      best_known = &e;
  // The board's floor: from measured ceilings where any record has them (the record's first), so
  // the scaling curve does not mix ceilings; else the datasheet floor of any record.
  std::vector<const RecordView*> floor_candidates;
  if (holder) floor_candidates.push_back(holder);
  for (const auto& r : records) floor_candidates.push_back(&r);
  const RecordView* floor_from = nullptr;
  for (const auto* r : floor_candidates)
    if (!floor_from && r->floor && r->floor->ceilings == "measured") floor_from = r;
  for (const auto* r : floor_candidates)
    if (!floor_from && r->floor) floor_from = r;
  std::optional<FloorView> floor, floor_v1;
  if (floor_from) floor = floor_from->floor, floor_v1 = floor_from->floor_v1;

  json record = nullptr;
  if (holder) {
    const Entry* he = &entries.front();
    record = {{"implementation", holder->impl},
              {"language", holder->language},
              {"median_s", holder->timing->median_s},
              {"record_sha256", holder->sha},
              {"run_id", holder->run_id},
              {"observed", holder->timestamp},
              {"trust", he->j["trust"]},
              {"stale", he->j["stale"]},
              {"time_over_floor", rounded(over_floor(*holder))},
              {"n", he->j["timing"]["n"]},
              {"protocol", he->j["timing"]["protocol"]},
              {"floor", floor_json(holder->floor)}};
  }
  json best = nullptr;
  if (best_known)
    best = {{"implementation", best_known->shown->impl},
            {"median_s", best_known->shown->timing->median_s},
            {"status", best_known->status},
            {"trust", best_known->j["trust"]},
            {"observed", best_known->shown->timestamp},
            {"stale", best_known->j["stale"]},
            {"time_over_floor", best_known->j["time_over_floor"]},
            {"n", best_known->j["timing"]["n"]},
            {"protocol", best_known->j["timing"]["protocol"]}};

  return {{"runs", records.size()},
          {"eligible_runs", eligible_runs},
          {"reported_runs", reported_runs},
          {"last_observed", last_observed},
          {"record", record},
          {"best_known", best},
          {"floor", floor_json(floor)},
          {"floor_v1", floor_json(floor_v1)},
          {"entries", entries_json},
          {"fastest_by_language", fastest_by_language},
          {"history", history},
          {"excluded", excluded}};
}

}  // namespace mtabench::leaderboard
