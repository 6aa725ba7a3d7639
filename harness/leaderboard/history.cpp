#include "harness/leaderboard/history.h"

#include "harness/leaderboard/eligibility.h"
#include "harness/leaderboard/format.h"

namespace mtabench::leaderboard {

using json = nlohmann::json;

namespace {

json holder_ref(const RecordView& r) {
  return {{"implementation", r.impl}, {"median_s", r.timing->median_s}, {"record_sha256", r.sha}};
}

}  // namespace

json build_history(const std::vector<RecordView>& records, const std::vector<bool>& eligible,
                   const Rules& rules, const RecordView** holder_out) {
  json history = json::array();
  const RecordView* holder = nullptr;
  for (std::size_t i = 0; i < records.size(); ++i) {
    if (!eligible[i]) continue;
    const RecordView& r = records[i];
    json ev{{"date", r.timestamp},
            {"implementation", r.impl},
            {"median_s", r.timing->median_s},
            {"record_sha256", r.sha},
            {"run_id", r.run_id}};
    if (!holder) {
      ev["event"] = "first";
      ev["holder_before"] = nullptr;
      ev["speedup"] = nullptr;
      ev["margin_pct"] = nullptr;
      ev["evidence"] = nullptr;
      history.push_back(ev);
      holder = &r;
      continue;
    }
    if (!(r.timing->median_s < holder->timing->median_s)) continue;  // not a challenge
    const Difference d = compare_timings(*holder->timing, *r.timing, rules.alpha);
    const bool takes = beyond_noise(d, rules);
    ev["event"] = takes ? "taken" : "held";
    ev["holder_before"] = holder_ref(*holder);
    ev["speedup"] = round_sig(holder->timing->median_s / r.timing->median_s);
    ev["margin_pct"] =
        round_sig((holder->timing->median_s - r.timing->median_s) / holder->timing->median_s * 100);
    ev["evidence"] = evidence_json(d);
    history.push_back(ev);
    if (takes) holder = &r;
  }
  *holder_out = holder;
  return history;
}

}  // namespace mtabench::leaderboard
