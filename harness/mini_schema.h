#pragma once
// A small JSON Schema (2020-12) validator for the keywords mtabench's own schemas use: type,
// properties, required, additionalProperties, items, enum, const, minimum, maximum,
// exclusiveMinimum, minLength, pattern, minItems, $ref (to #/$defs/...), anyOf, oneOf, allOf.
// Annotations ($schema, $id, title, description, format, ...) are ignored. The schema files stay
// the single source of truth: `mtabench validate` and the Python tests read the same files.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace mtabench {

class MiniSchema {
 public:
  explicit MiniSchema(nlohmann::json schema) : root_(std::move(schema)) {}
  // Errors as "<JSON pointer>: <reason>"; empty when valid.
  std::vector<std::string> validate(const nlohmann::json& doc) const;

 private:
  nlohmann::json root_;
  void check(const nlohmann::json& s, const nlohmann::json& v, const std::string& ptr,
             std::vector<std::string>& errs, int depth) const;
  const nlohmann::json& resolve(const std::string& ref) const;
};

}  // namespace mtabench
