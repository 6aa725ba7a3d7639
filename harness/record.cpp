#include "harness/record.h"

#include "harness/sha256.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <stdexcept>
#include <string>

namespace mtabench {

namespace {

// A double as Python's repr (and so json.dumps) writes it: the shortest digits that round-trip,
// fixed notation for 1e-4 <= |x| < 1e16 (always with a fractional part: "100.0"), exponent
// notation otherwise with a sign and at least two exponent digits ("1e-05", "1.5e+16").
// nlohmann's own formatting differs in both respects, and an independent reader must be able to
// recompute a record's hash.
void python_float(double x, std::string& out) {
  if (!std::isfinite(x)) throw std::invalid_argument("canonical_json: NaN or infinity has no JSON form");
  if (x == 0) {
    out += std::signbit(x) ? "-0.0" : "0.0";
    return;
  }
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific);  // d.ddde±XX, shortest
  std::string sci(buf, r.ptr);
  const bool neg = sci[0] == '-';
  if (neg) sci.erase(0, 1);
  const auto e = sci.find('e');
  const int exp10 = std::stoi(sci.substr(e + 1));
  std::string digits = sci.substr(0, e);
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());  // significant digits
  if (neg) out += '-';
  if (exp10 >= -4 && exp10 < 16) {
    const int n = static_cast<int>(digits.size());
    if (exp10 < 0) {
      out += "0.";
      out.append(static_cast<std::size_t>(-exp10 - 1), '0');
      out += digits;
    } else if (exp10 + 1 >= n) {
      out += digits;
      out.append(static_cast<std::size_t>(exp10 + 1 - n), '0');
      out += ".0";
    } else {
      out += digits.substr(0, static_cast<std::size_t>(exp10 + 1));
      out += '.';
      out += digits.substr(static_cast<std::size_t>(exp10 + 1));
    }
    return;
  }
  out += digits[0];
  if (digits.size() > 1) {
    out += '.';
    out += digits.substr(1);
  }
  out += 'e';
  out += exp10 < 0 ? '-' : '+';
  const std::string ev = std::to_string(std::abs(exp10));
  if (ev.size() < 2) out += '0';
  out += ev;
}

void write(const nlohmann::json& j, std::string& out) {
  switch (j.type()) {
    case nlohmann::json::value_t::object: {
      out += '{';
      bool first = true;
      for (auto it = j.begin(); it != j.end(); ++it) {  // std::map: keys already sorted
        if (!first) out += ',';
        first = false;
        out += nlohmann::json(it.key()).dump(-1, ' ', false, nlohmann::json::error_handler_t::strict);
        out += ':';
        write(it.value(), out);
      }
      out += '}';
      break;
    }
    case nlohmann::json::value_t::array: {
      out += '[';
      for (std::size_t i = 0; i < j.size(); ++i) {
        if (i) out += ',';
        write(j[i], out);
      }
      out += ']';
      break;
    }
    case nlohmann::json::value_t::number_float: python_float(j.get<double>(), out); break;
    default:  // strings (escaped as json.dumps(ensure_ascii=False) does), integers, booleans, null
      out += j.dump(-1, ' ', false, nlohmann::json::error_handler_t::strict);
  }
}

}  // namespace

std::string canonical_json(const nlohmann::json& j) {
  std::string out;
  write(j, out);
  return out;
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
