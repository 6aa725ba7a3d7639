#include "harness/json_strict.h"

#include <fmt/core.h>

#include <fstream>
#include <set>
#include <sstream>
#include <vector>

namespace mtabench {

InputError::InputError(std::string file, std::string pointer, std::string reason)
    : std::runtime_error(fmt::format("{}: {}: {}", file, pointer.empty() ? "/" : pointer, reason)),
      file_(std::move(file)),
      pointer_(std::move(pointer)),
      reason_(std::move(reason)) {}

std::string json_pointer_token(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

namespace {

using json = nlohmann::json;

// A SAX consumer that builds the DOM like nlohmann's own, keeping the path to every value so
// that a duplicate key can be named by its JSON pointer.
class StrictBuilder : public nlohmann::json_sax<json> {
 public:
  explicit StrictBuilder(std::string file) : file_(std::move(file)) {}
  json result;
  std::string error;  // set on the first problem
  std::string error_pointer;

  bool null() override { return put(json(nullptr)); }
  bool boolean(bool v) override { return put(json(v)); }
  bool number_integer(number_integer_t v) override { return put(json(v)); }
  bool number_unsigned(number_unsigned_t v) override { return put(json(v)); }
  bool number_float(number_float_t v, const string_t&) override { return put(json(v)); }
  bool string(string_t& v) override { return put(json(v)); }
  bool binary(binary_t& v) override { return put(json::binary(v)); }
  bool start_object(std::size_t) override {
    json* j = place(json::object());
    frames_.push_back({j, {}, "", 0, true});
    return true;
  }
  bool key(string_t& k) override {
    Frame& f = frames_.back();
    if (!f.keys.insert(k).second) {
      error = fmt::format("duplicate key \"{}\" (a JSON reader would silently keep only one)", k);
      error_pointer = pointer() + "/" + json_pointer_token(k);
      return false;
    }
    f.key = k;
    return true;
  }
  bool end_object() override {
    frames_.pop_back();
    return true;
  }
  bool start_array(std::size_t) override {
    json* j = place(json::array());
    frames_.push_back({j, {}, "", 0, false});
    return true;
  }
  bool end_array() override {
    frames_.pop_back();
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& ex) override {
    error = ex.what();
    error_pointer = "";
    return false;
  }

 private:
  struct Frame {
    json* node;
    std::set<std::string> keys;
    std::string key;
    std::size_t index;
    bool is_object;
  };
  std::string file_;
  std::vector<Frame> frames_;

  // Pointer to the innermost open container: each enclosing frame contributes the key or
  // index under which its child is being built.
  std::string pointer() const {
    std::string p;
    for (std::size_t d = 0; d + 1 < frames_.size(); ++d) {
      const Frame& f = frames_[d];
      p += "/" + (f.is_object ? json_pointer_token(f.key) : std::to_string(f.index - 1));
    }
    return p;
  }
  json* place(json&& v) {
    if (frames_.empty()) {
      result = std::move(v);
      return &result;
    }
    Frame& f = frames_.back();
    if (f.is_object) return &((*f.node)[f.key] = std::move(v));
    f.node->push_back(std::move(v));
    ++f.index;
    return &f.node->back();
  }
  bool put(json&& v) {
    place(std::move(v));
    return true;
  }
};

}  // namespace

nlohmann::json parse_json_strict(const std::string& text, const std::string& file) {
  StrictBuilder b(file);
  const bool ok = json::sax_parse(text, &b, json::input_format_t::json, /*strict=*/true);
  if (!ok || !b.error.empty()) {
    std::string reason = b.error.empty() ? "not valid JSON" : b.error;
    // nlohmann's messages start with "[json.exception.parse_error.101] "; keep the useful part.
    const auto pos = reason.find("] ");
    if (reason.rfind("[json.exception", 0) == 0 && pos != std::string::npos)
      reason = "not valid JSON: " + reason.substr(pos + 2);
    throw InputError(file, b.error_pointer, reason);
  }
  return std::move(b.result);
}

std::string read_text_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path.string(), "", "cannot open file");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

nlohmann::json read_json_file_strict(const std::filesystem::path& path) {
  return parse_json_strict(read_text_file(path), path.string());
}

}  // namespace mtabench
