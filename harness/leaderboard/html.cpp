#include "harness/leaderboard/html.h"

#include "harness/leaderboard/describe.h"
#include "harness/leaderboard/format.h"
#include "harness/leaderboard/html_style.h"
#include "harness/leaderboard/svg_plot.h"

#include <fmt/core.h>

namespace mtabench::leaderboard {

using json = nlohmann::json;

namespace {

std::string esc(const std::string& s) { return html_escape(s); }
std::string esc(const json& j) { return html_escape(j.is_string() ? j.get<std::string>() : j.dump()); }

std::string badge(const std::string& kind, const std::string& text) {
  return fmt::format("<span class=\"badge {}\">{}</span>", kind, esc(text));
}

std::string trust_cell(const json& e) {
  const std::string t = e["trust"].get<std::string>();
  std::string s = badge(t, t);
  if (t == "reported" && e["trust_source"].is_object()) {
    const json& src = e["trust_source"];
    s += fmt::format(" <a href=\"{}\" title=\"{}\">source</a>", esc(src["url"]), esc(src["title"]));
  }
  if (t == "reproduced")
    s += " <span class=\"muted small\">with run " + esc(e["reproduced_with"]["run_id"]) + "</span>";
  return s;
}

std::string status_cell(const json& e) {
  const std::string s = e["status"].get<std::string>();
  if (s == "ineligible") return badge("ineligible", "not eligible") + " " + esc(e["reason"]);
  if (s == "reported") return "reported: never the record";
  return s == "record" ? "<b>record</b>" : esc(s);
}

void current_records(std::string& o, const json& doc) {
  o += "<section id=\"current\"><h2>Current records</h2>\n<table "
       "class=\"records\">\n<thead><tr><th>Workload</th><th>Hardware</th><th>Record</th><th>"
       "Implementation</th><th>Trust</th><th>× floor</th><th>Best known (incl. reported)</th><th>Eligible "
       "runs / records</th><th>Last observed</th></tr></thead>\n<tbody>\n";
  for (const auto& b : doc["boards"]) {
    const json& r = b["record"];
    const json& k = b["best_known"];
    std::string best = "—";
    if (k.is_object())
      best = esc(format_seconds(k["median_s"].get<double>())) + " " + esc(k["implementation"]) +
             "<br><span class=\"muted small\">" + esc(measured_how(k)) + "</span>" +
             (k["status"] == "reported" ? badge("reported", "reported") : "") +
             (k["stale"].get<bool>() ? badge("stale", "stale") : "");
    o += fmt::format(
        "<tr><td><a href=\"#{}\">{}</a><br><span class=\"muted\">{}</span></td><td>{}</td><td class=\"num\">"
        "{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td>{}</td><td class=\"num\">{} / {}</td><td>"
        "{}</td></tr>\n",
        esc(b["id"]), esc(b["workload"]["name"]), esc(b["workload"]["shape"]), esc(b["hardware"]["label"]),
        r.is_object() ? esc(format_seconds(r["median_s"].get<double>())) +
                            "<br><span class=\"muted small\">" + esc(measured_how(r)) + "</span>"
                      : "no eligible run",
        r.is_object() ? esc(r["implementation"]) : "—",
        r.is_object() ? badge(r["trust"].get<std::string>(), r["trust"].get<std::string>()) : "—",
        r.is_object() ? esc(over_floor_text(r["time_over_floor"], r["floor"])) : "—", best,
        esc(b["eligible_runs"]), esc(b["runs"]), esc(date_part(b["last_observed"].get<std::string>())));
  }
  o += "</tbody></table></section>\n";
}

void entries_table(std::string& o, const json& b) {
  o +=
      "<div class=\"scroll\"><table class=\"entries\">\n<thead><tr><th>#</th><th>Implementation</th><th>"
      "Median</th><th>p20 – p80</th><th>n</th><th>CV</th><th>Protocol</th><th>vs #1</th><th>vs baseline</th>"
      "<th>× floor</th><th>Trust</th><th>Observed</th><th>Records (eligible)</th><th>Status</th></tr></thead>"
      "\n<tbody>\n";
  for (const auto& e : b["entries"]) {
    const json& t = e["timing"];
    const json& impl = e["implementation"];
    const std::string cls = e["status"] == "record"       ? "record"
                            : e["status"] == "ineligible" ? "ineligible"
                                                          : "";
    std::string name = fmt::format("<b>{}</b><br><span class=\"muted\">{} · {}", esc(impl["name"]),
                                   esc(impl["language"]), esc(impl["license"]));
    const std::string src = impl["source"].get<std::string>();
    if (src.rfind("http", 0) == 0) name += fmt::format(" · <a href=\"{}\">source</a>", esc(src));
    name += "</span>";
    if (impl["install"].is_string()) name += "<br><code>" + esc(impl["install"]) + "</code>";
    std::string over_floor = "—";
    if (e["time_over_floor"].is_number())
      over_floor = esc(format_ratio(e["time_over_floor"].get<double>())) +
                   "<br><span class=\"muted small\">" + esc(e["floor"]["model"]) + ", " +
                   esc(e["floor"]["ceilings"]) + "</span>";
    o += fmt::format(
        "<tr class=\"{}\"><td class=\"num\">{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"range\">"
        "{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td><td class=\"num\">{}</td><td "
        "class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td><td>{}{}</td><td class=\"num\">{} ({})</td>"
        "<td>{}</td></tr>\n",
        cls, e["rank"].is_null() ? "—" : esc(e["rank"]), name, esc(median_text(t)), esc(spread_text(t)),
        esc(n_text(t)), esc(cv_text(t)), esc(protocol_text(t)), esc(ratio_text(e["vs_first"])),
        esc(ratio_text(e["vs_baseline"])), over_floor, trust_cell(e),
        esc(date_part(e["last_observed"].get<std::string>())),
        e["stale"].get<bool>() ? badge("stale", "stale") : "", esc(e["runs"]), esc(e["eligible_runs"]),
        status_cell(e));
  }
  o += "</tbody></table></div>\n";
}

void history_table(std::string& o, const json& b) {
  if (b["history"].empty()) return;
  o += "<h4>Record history</h4><p class=\"muted\">Eligible records in time order; <i>held</i>: faster, but "
       "not beyond noise, so the holder stayed.</p>\n<table class=\"history\"><thead><tr><th>Date</th><th>"
       "Event</th><th>Implementation</th><th>Median</th><th>Holder before</th><th>Margin</th><th>"
       "Evidence</th><th>Record</th></tr></thead><tbody>\n";
  for (const auto& h : b["history"]) {
    std::string before = "—", margin = "—";
    if (h["holder_before"].is_object()) {
      before = esc(h["holder_before"]["implementation"]) + " " +
               esc(format_seconds(h["holder_before"]["median_s"].get<double>()));
      margin = esc(fmt::format("{} faster ({:.2f}%)", format_ratio(h["speedup"].get<double>()),
                               h["margin_pct"].get<double>()));
    }
    o += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>"
        "<code>{}</code></td></tr>\n",
        esc(date_part(h["date"].get<std::string>())), esc(h["event"]), esc(h["implementation"]),
        esc(format_seconds(h["median_s"].get<double>())), before, margin, esc(evidence_text(h["evidence"])),
        esc(short_hash(h["record_sha256"].get<std::string>())));
  }
  o += "</tbody></table>\n";
}

void excluded_table(std::string& o, const json& b) {
  if (b["excluded"].empty()) return;
  o += "<h4>Records not eligible</h4>\n<table "
       "class=\"excluded\"><thead><tr><th>Implementation</th><th>Record</th><th>Observed</th><th>Median</th>"
       "<th>Why</th></tr></thead><tbody>\n";
  for (const auto& x : b["excluded"])
    o += fmt::format(
        "<tr><td>{}</td><td><code>{}</code></td><td>{}</td><td class=\"num\">{}</td><td>{}</td></tr>\n",
        esc(x["implementation"]), esc(short_hash(x["record_sha256"].get<std::string>())),
        esc(date_part(x["observed"].get<std::string>())),
        x["median_s"].is_number() ? esc(format_seconds(x["median_s"].get<double>())) : "—", esc(x["reason"]));
  o += "</tbody></table>\n";
}

void board_section(std::string& o, const json& b) {
  const json& w = b["workload"];
  o += fmt::format(
      "<article class=\"board\" id=\"{}\">\n<h3>{} · {}</h3>\n<p class=\"muted\">{} · identity <code>"
      "{}</code> · hardware key <code>{}</code> · {} eligible run(s) of {} record(s), {} reported · last "
      "observed {}</p>\n",
      esc(b["id"]), esc(w["name"]), esc(b["hardware"]["label"]), esc(w["shape"]),
      esc(short_hash(w["identity"].get<std::string>())), esc(b["hardware"]["key"]), esc(b["eligible_runs"]),
      esc(b["runs"]), esc(b["reported_runs"]), esc(b["last_observed"]));
  o += "<div class=\"facts\">\n";
  if (b["record"].is_object()) {
    const json& r = b["record"];
    o += fmt::format("<div class=\"fact\"><b>Record</b><span class=\"big\">{}</span> {}{}{}<br>{}</div>\n",
                     esc(format_seconds(r["median_s"].get<double>())), esc(r["implementation"]),
                     badge(r["trust"].get<std::string>(), r["trust"].get<std::string>()),
                     r["stale"].get<bool>() ? badge("stale", "stale") : "", esc(record_sentence(b)));
  } else {
    std::string best;
    const json& k = b["best_known"];
    if (k.is_object())
      best = fmt::format(
          "<br>Best known: <span class=\"big\">{}</span> {}{}",
          esc(format_seconds(k["median_s"].get<double>())), esc(k["implementation"]),
          k["status"] == "reported" ? badge("reported", "reported") + " not independently reproduced" : "");
    o += "<div class=\"fact\"><b>Record</b>No eligible run on this board." + best + "</div>\n";
  }
  std::string floor = esc(floor_text(b["floor"]));
  if (b["floor_v1"].is_object())
    floor += "<br>headroom-v1 " + esc(format_seconds(b["floor_v1"]["seconds"].get<double>())) +
             " (every declared tensor once at datasheet bandwidth: the public page's rule)";
  o += "<div class=\"fact\"><b>Estimated floor</b>" + floor +
       "<br><span class=\"muted\">a lower bound, an estimate and not evidence</span></div>\n";
  if (!b["fastest_by_language"].empty()) {
    o += "<div class=\"fact\"><b>Fastest by language</b>";
    for (const auto& f : b["fastest_by_language"])
      o += fmt::format("{} · {} · {}{}{}<br>", esc(f["language"]), esc(f["implementation"]),
                       esc(format_seconds(f["median_s"].get<double>())),
                       f["rank"].is_number() ? " · #" + esc(f["rank"]) : "",
                       f["status"] == "reported" ? badge("reported", "reported") : "");
    o += "</div>\n";
  }
  o += "</div>\n";
  entries_table(o, b);
  history_table(o, b);
  excluded_table(o, b);
  o += "</article>\n";
}

void scaling_section(std::string& o, const json& doc) {
  o += "<section id=\"scaling\"><h2>Scaling by seq</h2>\n<p class=\"muted\">Per hardware and workload family "
       "(the identity fields except seq): each implementation's entry median against seq, with the floor "
       "curve; log-log axes.</p>\n";
  for (const auto& g : doc["scaling"]) {
    if (g["seqs"].size() >= 2)
      o += fmt::format(
          "<figure id=\"{}\">\n{}<figcaption>Median time per call against seq; dashed: the floor. Hollow "
          "markers: reported figures.</figcaption>\n</figure>\n",
          esc(g["id"]), scaling_svg(g));
    else
      o += fmt::format("<h3 id=\"{}\">{} · {}</h3><p class=\"muted\">One seq so far: a table, no plot.</p>\n",
                       esc(g["id"]), esc(g["family"]["label"]), esc(g["hardware"]["label"]));
    o += "<table class=\"scaling\"><thead><tr><th>seq</th><th>floor";
    if (!g["floor"].empty())
      o += " (" + esc(g["floor"][0]["model"]) + ", " + esc(g["floor"][0]["ceilings"]) + ")";
    o += "</th>";
    for (const auto& s : g["series"]) o += "<th>" + esc(s["implementation"]) + "</th>";
    o += "</tr></thead><tbody>\n";
    for (const auto& seq : g["seqs"]) {
      std::string fl = "—";
      for (const auto& f : g["floor"])
        if (f["seq"] == seq) fl = format_seconds(f["seconds"].get<double>());
      o += "<tr><td class=\"num\">" + esc(seq) + "</td><td class=\"num\">" + esc(fl) + "</td>";
      for (const auto& s : g["series"]) {
        std::string v = "—";
        for (const auto& p : s["points"])
          if (p["seq"] == seq)
            v = esc(format_seconds(p["median_s"].get<double>())) +
                (p["status"] == "reported" ? badge("reported", "reported") : "");
        o += "<td class=\"num\">" + v + "</td>";
      }
      o += "</tr>\n";
    }
    o += "</tbody></table>\n";
  }
  o += "</section>\n";
}

}  // namespace

std::string leaderboard_html(const json& doc) {
  const json& in = doc["inputs"];
  const json& r = doc["rules"];
  std::string o =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" "
      "content=\"width=device-width, initial-scale=1\">\n<title>mtabench leaderboard: multi-token "
      "attention</title>\n<style>" +
      std::string(kLeaderboardCss) + "</style>\n</head>\n<body>\n";
  o += fmt::format(
      "<header><h1>Multi-token attention</h1>\n<p class=\"sub\">liger-mta-fwd-v1 · {} eligible run(s) · {} "
      "board(s) · {} implementation(s) · reference time {}</p>\n<p>Causal mask, softmax, then a K×K "
      "convolution to heads_out with bias, re-masked causally. Every time is the median of the record's "
      "protocol (n samples; p20 – p80 their 20th and 80th percentiles); × floor divides it by the record's "
      "roofline floor, whose model and ceilings are named. <a href=\"#rules\">How records are decided</a>"
      ".</p></header>\n",
      esc(doc["totals"]["eligible_runs"]), esc(doc["totals"]["boards"]),
      esc(doc["totals"]["implementations"]), esc(doc["generated_utc"]));
  // Overview first (records, then the plots), then the boards in detail.
  current_records(o, doc);
  scaling_section(o, doc);
  o += "<section id=\"boards\"><h2>Boards</h2>\n";
  for (const auto& b : doc["boards"]) board_section(o, b);
  o += "</section>\n";
  o += "<section id=\"rules\"><h2>How records are decided</h2>\n<ul class=\"rules\">\n";
  for (const auto& s : r["statements"]) o += "<li>" + esc(s) + "</li>\n";
  o += fmt::format(
      "</ul>\n<p>Bounds of this leaderboard: CV &lt; {}; noise {:g}%; α = {:g}; stale after {:g} days; "
      "baseline “{}”.</p>\n</section>\n",
      esc(format_pct(r["max_cv"].get<double>())), r["noise_pct"].get<double>(), r["alpha"].get<double>(),
      r["stale_days"].get<double>(), esc(r["baseline"]));
  if (!in["problems"].empty()) {
    o += "<section id=\"problems\"><h2>Input problems</h2><ul>\n";
    for (const auto& p : in["problems"]) o += "<li>" + esc(p) + "</li>\n";
    o += "</ul></section>\n";
  }
  o += fmt::format(
      "<footer>{} unique record(s) from {} read ({} duplicate(s) merged by record_sha256). The same figures "
      "as JSON: <a href=\"leaderboard.json\">leaderboard.json</a>; as Markdown: <a href=\"LEADERBOARD.md\">"
      "LEADERBOARD.md</a>.</footer>\n</body>\n</html>\n",
      esc(in["unique_records"]), esc(in["records_read"]), esc(in["duplicates_merged"]));
  return o;
}

}  // namespace mtabench::leaderboard
