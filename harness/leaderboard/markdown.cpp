#include "harness/leaderboard/markdown.h"

#include "harness/leaderboard/describe.h"
#include "harness/leaderboard/format.h"

#include <fmt/core.h>

namespace mtabench::leaderboard {

using json = nlohmann::json;

namespace {

std::string cell(const std::string& s) { return markdown_cell(s); }
std::string str(const json& j) { return j.is_string() ? j.get<std::string>() : j.dump(); }

std::string trust_text(const json& e) {
  const std::string t = e["trust"].get<std::string>();
  if (t == "reported" && e["trust_source"].is_object())
    return fmt::format("reported: [{}]({})", cell(e["trust_source"]["title"].get<std::string>()),
                       e["trust_source"]["url"].get<std::string>());
  if (t == "reproduced") return "reproduced (run " + e["reproduced_with"]["run_id"].get<std::string>() + ")";
  return t;
}

std::string status_text(const json& e) {
  const std::string s = e["status"].get<std::string>();
  if (s == "ineligible") return "not eligible: " + e["reason"].get<std::string>();
  if (s == "reported") return "reported (never the record)";
  return s;
}

void current_records(std::string& o, const json& doc) {
  o += "## Current records\n\n";
  o += "| Workload | Hardware | Record | Implementation | Trust | × floor | Best known (incl. reported) | "
       "Eligible runs / records | Last observed |\n|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& b : doc["boards"]) {
    const json& r = b["record"];
    const json& k = b["best_known"];
    std::string best = "—";
    if (k.is_object())
      best = fmt::format("{} {} ({}){}", format_seconds(k["median_s"].get<double>()),
                         k["implementation"].get<std::string>(), measured_how(k),
                         k["status"] == "reported" ? ", reported" : "");
    o += fmt::format(
        "| [{}](#{}) · {} | {} | {} | {} | {} | {} | {} | {} / {} | {}{} |\n",
        cell(b["workload"]["name"].get<std::string>()), b["id"].get<std::string>(),
        b["workload"]["shape"].get<std::string>(), cell(b["hardware"]["label"].get<std::string>()),
        r.is_object() ? format_seconds(r["median_s"].get<double>()) + " (" + measured_how(r) + ")"
                      : "no eligible run",
        r.is_object() ? r["implementation"].get<std::string>() : "—",
        r.is_object() ? r["trust"].get<std::string>() : "—",
        r.is_object() ? over_floor_text(r["time_over_floor"], r["floor"]) : "—", best,
        str(b["eligible_runs"]), str(b["runs"]), date_part(b["last_observed"].get<std::string>()),
        r.is_object() && r["stale"].get<bool>() ? " (stale)" : "");
  }
  o += "\n";
}

void entries_table(std::string& o, const json& b) {
  o += "| # | Implementation | Language | License | Median | p20 – p80 | n | CV | Protocol | vs #1 | vs "
       "baseline | × floor | Trust | Observed | Records (eligible) | Status |\n";
  o += "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& e : b["entries"]) {
    const json& t = e["timing"];
    const json& impl = e["implementation"];
    o += fmt::format(
        "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {}{} | {} ({}) | {} |\n",
        e["rank"].is_null() ? "—" : e["rank"].dump(), cell(impl["name"].get<std::string>()),
        impl["language"].get<std::string>(), cell(impl["license"].get<std::string>()), median_text(t),
        spread_text(t), n_text(t), cv_text(t), cell(protocol_text(t)), ratio_text(e["vs_first"]),
        ratio_text(e["vs_baseline"]), over_floor_text(e["time_over_floor"], e["floor"]), trust_text(e),
        date_part(e["last_observed"].get<std::string>()), e["stale"].get<bool>() ? " stale" : "",
        str(e["runs"]), str(e["eligible_runs"]), cell(status_text(e)));
  }
  o += "\n";
}

void history_table(std::string& o, const json& b) {
  if (b["history"].empty()) return;
  o += "**Record history** (eligible records in time order; \"held\": faster, but not beyond noise, so the "
       "holder stayed)\n\n";
  o += "| Date | Event | Implementation | Median | Holder before | Margin | Evidence | Record |\n";
  o += "|---|---|---|---|---|---|---|---|\n";
  for (const auto& h : b["history"]) {
    std::string before = "—", margin = "—";
    if (h["holder_before"].is_object()) {
      before = fmt::format("{} {}", h["holder_before"]["implementation"].get<std::string>(),
                           format_seconds(h["holder_before"]["median_s"].get<double>()));
      margin = fmt::format("{} faster ({:.2f}%)", format_ratio(h["speedup"].get<double>()),
                           h["margin_pct"].get<double>());
    }
    o += fmt::format("| {} | {} | {} | {} | {} | {} | {} | `{}` |\n", date_part(h["date"].get<std::string>()),
                     h["event"].get<std::string>(), cell(h["implementation"].get<std::string>()),
                     format_seconds(h["median_s"].get<double>()), cell(before), margin,
                     cell(evidence_text(h["evidence"])), short_hash(h["record_sha256"].get<std::string>()));
  }
  o += "\n";
}

void excluded_table(std::string& o, const json& b) {
  if (b["excluded"].empty()) return;
  o += "**Records not eligible** (counted in the records, never the record)\n\n";
  o += "| Implementation | Record | Observed | Median | Why |\n|---|---|---|---|---|\n";
  for (const auto& x : b["excluded"])
    o += fmt::format("| {} | `{}` | {} | {} | {} |\n", cell(x["implementation"].get<std::string>()),
                     short_hash(x["record_sha256"].get<std::string>()),
                     date_part(x["observed"].get<std::string>()),
                     x["median_s"].is_number() ? format_seconds(x["median_s"].get<double>()) : "—",
                     cell(x["reason"].get<std::string>()));
  o += "\n";
}

void board_section(std::string& o, const json& b) {
  const json& w = b["workload"];
  o += fmt::format("<a id=\"{}\"></a>\n### {} · {} · {}\n\n", b["id"].get<std::string>(),
                   cell(w["name"].get<std::string>()), w["shape"].get<std::string>(),
                   cell(b["hardware"]["label"].get<std::string>()));
  o += fmt::format(
      "Workload identity `{}` · hardware key `{}` · {} eligible run(s) of {} record(s), {} reported · last "
      "observed {}\n\n",
      w["identity"].get<std::string>(), b["hardware"]["key"].get<std::string>(), str(b["eligible_runs"]),
      str(b["runs"]), str(b["reported_runs"]), b["last_observed"].get<std::string>());
  if (b["record"].is_object()) {
    o += "**Record:** " + cell(record_sentence(b)) + ".\n\n";
  } else {
    o += "**No record:** no eligible run on this board.";
    const json& k = b["best_known"];
    if (k.is_object())
      o += fmt::format(" Best known: {} {} ({}{}).", k["implementation"].get<std::string>(),
                       format_seconds(k["median_s"].get<double>()),
                       k["status"] == "reported" ? "reported by a source, not independently reproduced"
                                                 : k["status"].get<std::string>(),
                       k["stale"].get<bool>() ? "; stale" : "");
    o += "\n\n";
  }
  o += "**Floor:** " + floor_text(b["floor"]);
  if (b["floor_v1"].is_object())
    o += fmt::format(
        "; headroom-v1 {} (every declared tensor once at datasheet bandwidth, the public page's rule)",
        format_seconds(b["floor_v1"]["seconds"].get<double>()));
  o += ". A lower bound, an estimate and not evidence: a kernel can sit well above it for good reasons.\n\n";
  if (!b["fastest_by_language"].empty()) {
    o += "**Fastest by language:** ";
    bool firstl = true;
    for (const auto& f : b["fastest_by_language"]) {
      o += fmt::format("{}{} · {} · {}{}{}", firstl ? "" : " · ", f["language"].get<std::string>(),
                       f["implementation"].get<std::string>(), format_seconds(f["median_s"].get<double>()),
                       f["rank"].is_number() ? " (#" + f["rank"].dump() + ")" : "",
                       f["status"] == "reported" ? " (reported)" : "");
      firstl = false;
    }
    o += "\n\n";
  }
  entries_table(o, b);
  history_table(o, b);
  excluded_table(o, b);
}

void scaling_section(std::string& o, const json& doc) {
  o += "## Scaling by seq\n\n";
  o +=
      "Per hardware and workload family (the identity fields except seq): each implementation's entry median "
      "against seq, with the floor. Plots: log-log axes.\n\n";
  for (const auto& g : doc["scaling"]) {
    o += fmt::format("### {} · {}\n\n", g["family"]["label"].get<std::string>(),
                     cell(g["hardware"]["label"].get<std::string>()));
    if (g["seqs"].size() >= 2)
      o += fmt::format("![Scaling by seq, {} on {}](plots/{}.svg)\n\n",
                       g["family"]["label"].get<std::string>(),
                       cell(g["hardware"]["label"].get<std::string>()), g["id"].get<std::string>());
    else
      o += "One seq so far: a table, no plot.\n\n";
    std::string floor_head = "floor";
    if (!g["floor"].empty())
      floor_head = fmt::format("floor ({}, {})", g["floor"][0]["model"].get<std::string>(),
                               g["floor"][0]["ceilings"].get<std::string>());
    o += "| seq | " + floor_head;
    for (const auto& s : g["series"]) o += " | " + cell(s["implementation"].get<std::string>());
    o += " |\n|---|---";
    for (std::size_t i = 0; i < g["series"].size(); ++i) o += "|---";
    o += "|\n";
    for (const auto& seq : g["seqs"]) {
      std::string fl = "—";
      for (const auto& f : g["floor"])
        if (f["seq"] == seq) fl = format_seconds(f["seconds"].get<double>());
      o += "| " + seq.dump() + " | " + fl;
      for (const auto& s : g["series"]) {
        std::string v = "—";
        for (const auto& p : s["points"])
          if (p["seq"] == seq)
            v = format_seconds(p["median_s"].get<double>()) +
                (p["status"] == "reported" ? " (reported)" : "");
        o += " | " + v;
      }
      o += " |\n";
    }
    o += "\n";
  }
}

}  // namespace

std::string leaderboard_markdown(const json& doc) {
  std::string o = "# mtabench leaderboard: multi-token attention (liger-mta-fwd-v1)\n\n";
  const json& in = doc["inputs"];
  o += fmt::format(
      "Reference time {} (for the stale marks). {} unique record(s) ({} read, {} duplicate(s) merged by "
      "record_sha256); {} input problem(s). {} board(s) (workload × hardware), {} implementation(s), {} "
      "eligible run(s).\n\n",
      doc["generated_utc"].get<std::string>(), str(in["unique_records"]), str(in["records_read"]),
      str(in["duplicates_merged"]), in["problems"].size(), str(doc["totals"]["boards"]),
      str(doc["totals"]["implementations"]), str(doc["totals"]["eligible_runs"]));
  o += "Every time is the median of the record's protocol (n samples; p20 – p80 their 20th and 80th "
       "percentiles); × floor divides it by the record's roofline floor, whose model and ceilings are named. "
       "See [How records are decided](#how-records-are-decided).\n\n";
  current_records(o, doc);
  o += "## Boards\n\n";
  for (const auto& b : doc["boards"]) board_section(o, b);
  scaling_section(o, doc);
  o += "## How records are decided\n\n";
  for (const auto& s : doc["rules"]["statements"]) o += "- " + s.get<std::string>() + "\n";
  const json& r = doc["rules"];
  o += fmt::format(
      "\nBounds of this leaderboard: CV < {}; noise {:g}%; α = {:g}; stale after {:g} days; baseline "
      "\"{}\".\n\n",
      format_pct(r["max_cv"].get<double>()), r["noise_pct"].get<double>(), r["alpha"].get<double>(),
      r["stale_days"].get<double>(), r["baseline"].get<std::string>());
  if (!in["problems"].empty()) {
    o += "## Input problems\n\n";
    for (const auto& p : in["problems"]) o += "- " + cell(p.get<std::string>()) + "\n";
    o += "\n";
  }
  return o;
}

}  // namespace mtabench::leaderboard
