#include "harness/record.h"

#include "harness/sha256.h"

namespace mtabench {

std::string canonical_json(const nlohmann::json& j) {
  return j.dump(-1, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::strict);
}

std::string record_hash(const nlohmann::json& record) {
  nlohmann::json copy = record;
  copy.erase("record_sha256");
  return sha256_hex(canonical_json(copy));
}

nlohmann::json seal_record(nlohmann::json record) {
  record["schema"] = kRecordSchema;
  record["schema_version"] = kRecordSchemaVersion;
  record.erase("record_sha256");
  record["record_sha256"] = record_hash(record);
  return record;
}

std::string check_record_hash(const nlohmann::json& record) {
  if (!record.is_object()) return "not a JSON object";
  if (!record.contains("record_sha256") || !record["record_sha256"].is_string())
    return "no record_sha256";
  const std::string want = record_hash(record);
  const std::string have = record["record_sha256"].get<std::string>();
  if (want != have) return "record_sha256 does not match the content (recorded " + have.substr(0, 12) +
                           "..., computed " + want.substr(0, 12) + "...): the record was altered";
  return "";
}

}  // namespace mtabench
