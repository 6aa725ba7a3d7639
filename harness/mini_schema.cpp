#include "harness/mini_schema.h"

#include "harness/json_strict.h"

#include <fmt/core.h>

#include <regex>
#include <stdexcept>

namespace mtabench {

namespace {
bool is_type(const nlohmann::json& v, const std::string& t) {
  if (t == "object") return v.is_object();
  if (t == "array") return v.is_array();
  if (t == "string") return v.is_string();
  if (t == "integer") return v.is_number_integer() || (v.is_number_float() && v.get<double>() == static_cast<double>(static_cast<long long>(v.get<double>())));
  if (t == "number") return v.is_number();
  if (t == "boolean") return v.is_boolean();
  if (t == "null") return v.is_null();
  return false;
}
std::string show(const nlohmann::json& v) {
  std::string s = v.dump();
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}
}  // namespace

const nlohmann::json& MiniSchema::resolve(const std::string& ref) const {
  if (ref.rfind("#/", 0) != 0) throw std::runtime_error("mini_schema: only local $ref supported: " + ref);
  return root_.at(nlohmann::json::json_pointer(ref.substr(1)));
}

std::vector<std::string> MiniSchema::validate(const nlohmann::json& doc) const {
  std::vector<std::string> errs;
  check(root_, doc, "", errs, 0);
  return errs;
}

void MiniSchema::check(const nlohmann::json& s, const nlohmann::json& v, const std::string& ptr,
                       std::vector<std::string>& errs, int depth) const {
  if (depth > 64) throw std::runtime_error("mini_schema: $ref recursion too deep");
  const std::string at = ptr.empty() ? "/" : ptr;
  if (s.is_boolean()) {
    if (!s.get<bool>()) errs.push_back(at + ": not allowed here");
    return;
  }
  if (s.contains("$ref")) check(resolve(s["$ref"].get<std::string>()), v, ptr, errs, depth + 1);
  if (s.contains("type")) {
    const auto& t = s["type"];
    bool ok = false;
    if (t.is_string()) ok = is_type(v, t.get<std::string>());
    else
      for (const auto& x : t) ok = ok || is_type(v, x.get<std::string>());
    if (!ok) {
      errs.push_back(fmt::format("{}: expected {}, got {}", at, t.is_string() ? t.get<std::string>() : t.dump(), v.type_name()));
      return;  // further keywords would only repeat the type error
    }
  }
  if (s.contains("const") && v != s["const"]) errs.push_back(fmt::format("{}: must be {}", at, show(s["const"])));
  if (s.contains("enum")) {
    bool found = false;
    for (const auto& e : s["enum"]) found = found || e == v;
    if (!found) errs.push_back(fmt::format("{}: {} is not one of {}", at, show(v), show(s["enum"])));
  }
  if (v.is_number()) {
    const double x = v.get<double>();
    if (s.contains("minimum") && x < s["minimum"].get<double>()) errs.push_back(fmt::format("{}: {} is below the minimum {}", at, show(v), show(s["minimum"])));
    if (s.contains("maximum") && x > s["maximum"].get<double>()) errs.push_back(fmt::format("{}: {} is above the maximum {}", at, show(v), show(s["maximum"])));
    if (s.contains("exclusiveMinimum") && x <= s["exclusiveMinimum"].get<double>()) errs.push_back(fmt::format("{}: {} must be greater than {}", at, show(v), show(s["exclusiveMinimum"])));
  }
  if (v.is_string()) {
    const auto& str = v.get_ref<const std::string&>();
    if (s.contains("minLength") && str.size() < s["minLength"].get<std::size_t>()) errs.push_back(fmt::format("{}: shorter than {}", at, show(s["minLength"])));
    if (s.contains("pattern") && !std::regex_search(str, std::regex(s["pattern"].get<std::string>(), std::regex::ECMAScript)))
      errs.push_back(fmt::format("{}: {} does not match {}", at, show(v), s["pattern"].get<std::string>()));
  }
  if (v.is_array()) {
    if (s.contains("minItems") && v.size() < s["minItems"].get<std::size_t>()) errs.push_back(fmt::format("{}: fewer than {} items", at, show(s["minItems"])));
    if (s.contains("items"))
      for (std::size_t i = 0; i < v.size(); ++i) check(s["items"], v[i], ptr + "/" + std::to_string(i), errs, depth + 1);
  }
  if (v.is_object()) {
    if (s.contains("required"))
      for (const auto& k : s["required"])
        if (!v.contains(k.get<std::string>())) errs.push_back(fmt::format("{}: missing required \"{}\"", at, k.get<std::string>()));
    const nlohmann::json* props = s.contains("properties") ? &s["properties"] : nullptr;
    for (const auto& [k, val] : v.items()) {
      const std::string kp = ptr + "/" + json_pointer_token(k);
      if (props && props->contains(k)) check((*props)[k], val, kp, errs, depth + 1);
      else if (s.contains("additionalProperties")) {
        const auto& ap = s["additionalProperties"];
        if (ap.is_boolean() && !ap.get<bool>()) errs.push_back(fmt::format("{}: unknown key \"{}\"", at, k));
        else if (ap.is_object()) check(ap, val, kp, errs, depth + 1);
      }
    }
  }
  if (s.contains("allOf"))
    for (const auto& sub : s["allOf"]) check(sub, v, ptr, errs, depth + 1);
  for (const char* kw : {"anyOf", "oneOf"}) {
    if (!s.contains(kw)) continue;
    int matches = 0;
    std::vector<std::string> first_errs;
    for (const auto& sub : s[kw]) {
      std::vector<std::string> e;
      check(sub, v, ptr, e, depth + 1);
      if (e.empty()) ++matches;
      else if (first_errs.empty() || e.size() < first_errs.size()) first_errs = e;
    }
    if (matches == 0) {
      errs.push_back(fmt::format("{}: matches none of the {} alternatives ({})", at, kw, first_errs.empty() ? "" : first_errs.front()));
    } else if (std::string(kw) == "oneOf" && matches > 1) {
      errs.push_back(fmt::format("{}: matches {} of the oneOf alternatives, not exactly one", at, matches));
    }
  }
}

}  // namespace mtabench
