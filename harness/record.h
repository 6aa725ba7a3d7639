#pragma once
// Records (SPEC §6): one JSON object per (workload, implementation, device, run). The record's
// sha256 covers its canonical content (sorted keys, no whitespace, the hash field left out);
// readers reject a record whose hash or schema does not match.
#include <nlohmann/json.hpp>

#include <string>

namespace mtabench {

inline constexpr int kRecordSchemaVersion = 1;
inline constexpr const char* kRecordSchema = "mtabench-record";

// Canonical text: sorted keys, no whitespace, numbers as Python's json.dumps writes them (so any
// reader can recompute the hash: json.dumps(r, sort_keys=True, separators=(",", ":"),
// ensure_ascii=False)).
std::string canonical_json(const nlohmann::json& j);
// sha256 of the canonical record without its "record_sha256" field.
std::string record_hash(const nlohmann::json& record);
// Adds schema, schema_version and record_sha256.
nlohmann::json seal_record(nlohmann::json record);
// Empty when the record's hash matches; else what is wrong.
std::string check_record_hash(const nlohmann::json& record);

// The outcome vocabulary.
inline constexpr const char* kPassed = "passed";
inline constexpr const char* kIncorrect = "incorrect";
inline constexpr const char* kUnsupported = "unsupported";
inline constexpr const char* kFailed = "failed";
inline constexpr const char* kTimeout = "timeout";

}  // namespace mtabench
