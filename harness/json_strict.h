#pragma once
// JSON reading that refuses what nlohmann accepts silently: a duplicate key (nlohmann keeps the
// last one). Errors carry the JSON pointer and, for syntax errors, line and column.
#include <nlohmann/json.hpp>

#include <filesystem>
#include <stdexcept>
#include <string>

namespace mtabench {

// An error in an input file: which file, where in it (a JSON pointer, "" for the whole
// document), and why. what() is the one-line message printed to the user.
class InputError : public std::runtime_error {
 public:
  InputError(std::string file, std::string pointer, std::string reason);
  const std::string& file() const { return file_; }
  const std::string& pointer() const { return pointer_; }
  const std::string& reason() const { return reason_; }

 private:
  std::string file_, pointer_, reason_;
};

// Parses text strictly; `file` only names the source in errors.
nlohmann::json parse_json_strict(const std::string& text, const std::string& file);
nlohmann::json read_json_file_strict(const std::filesystem::path& path);
std::string read_text_file(const std::filesystem::path& path);

// JSON pointer escaping of one reference token (RFC 6901).
std::string json_pointer_token(const std::string& key);

}  // namespace mtabench
