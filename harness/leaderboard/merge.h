#pragma once
// Records from many files, runs, GPUs and hosts, merged by record_sha256: a record read twice
// counts once, so merging is idempotent and does not depend on the order of the inputs.
#include "harness/storage.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace mtabench::leaderboard {

struct MergedRecords {
  std::vector<nlohmann::json> records;  // unique, sorted by (provenance.timestamp_utc, record_sha256)
  std::size_t read = 0;                 // valid records read, duplicates included
  std::size_t duplicates = 0;
  std::vector<std::string> problems;  // rejected records and unreadable inputs, "file:line: why"
};

MergedRecords merge_by_hash(const RecordSet& set);
MergedRecords read_and_merge(const std::vector<std::string>& paths);

}  // namespace mtabench::leaderboard
