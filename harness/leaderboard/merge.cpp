#include "harness/leaderboard/merge.h"

#include <algorithm>
#include <set>

namespace mtabench::leaderboard {

MergedRecords merge_by_hash(const RecordSet& set) {
  MergedRecords out;
  out.read = set.records.size();
  std::set<std::string> seen;
  for (const auto& r : set.records) {
    if (seen.insert(r["record_sha256"].get<std::string>()).second)
      out.records.push_back(r);
    else
      ++out.duplicates;
  }
  auto key = [](const nlohmann::json& r) {
    return std::make_pair(r["provenance"]["timestamp_utc"].get<std::string>(),
                          r["record_sha256"].get<std::string>());
  };
  std::sort(out.records.begin(), out.records.end(),
            [&](const nlohmann::json& a, const nlohmann::json& b) { return key(a) < key(b); });
  for (const auto& p : set.problems) out.problems.push_back(p.to_string());
  return out;
}

MergedRecords read_and_merge(const std::vector<std::string>& paths) {
  return merge_by_hash(read_records(paths));
}

}  // namespace mtabench::leaderboard
