#pragma once
// Durable record storage (SPEC §6): whole files are written atomically (temporary file in the
// same folder, fsync, rename, fsync the folder); history files are append-only JSONL, one
// record per line, each append one write() followed by fsync. Readers report and skip a
// truncated last line, a line that is not JSON, a record whose hash or schema does not match.
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace mtabench {

void atomic_write_file(const std::filesystem::path& path, const std::string& content);
void append_line_durable(const std::filesystem::path& path, const std::string& line);

struct ReadProblem {
  std::string file;
  std::int64_t line = 0;  // 1-based; 0 for the whole file
  std::string reason;
  std::string to_string() const;
};

struct RecordSet {
  std::vector<nlohmann::json> records;
  std::vector<std::string> origins;  // "file:line" of each record
  std::vector<ReadProblem> problems;
};

// Reads *.jsonl (a record per line) and *.json (one record, or an array of records) files, and
// the *.jsonl files of folders (recursively, sorted). Every record is checked: hash and schema.
RecordSet read_records(const std::vector<std::string>& paths);

// Schema + version + hash of one record; empty when valid.
std::vector<std::string> validate_record(const nlohmann::json& record);

}  // namespace mtabench
