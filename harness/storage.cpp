#include "harness/storage.h"

#include "harness/json_strict.h"
#include "harness/mini_schema.h"
#include "harness/record.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <system_error>

namespace mtabench {

const char* embedded_record_schema();  // generated from schemas/record.schema.json

namespace fs = std::filesystem;

namespace {
[[noreturn]] void sys_fail(const std::string& what, const fs::path& p) {
  throw std::runtime_error(fmt::format("{} {}: {}", what, p.string(), std::strerror(errno)));
}
void write_all(int fd, const std::string& s, const fs::path& p) {
  std::size_t off = 0;
  while (off < s.size()) {
    const ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      sys_fail("write", p);
    }
    off += static_cast<std::size_t>(n);
  }
}
void fsync_dir(const fs::path& dir) {
  const int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) sys_fail("open folder", dir);
  if (::fsync(fd) != 0) {
    ::close(fd);
    sys_fail("fsync folder", dir);
  }
  ::close(fd);
}
}  // namespace

void atomic_write_file(const fs::path& path, const std::string& content) {
  const fs::path dir = path.parent_path();
  if (!dir.empty()) fs::create_directories(dir);
  std::random_device rd;
  const fs::path tmp = path.string() + fmt::format(".tmp.{}.{:08x}", ::getpid(), rd());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0) sys_fail("create", tmp);
  try {
    write_all(fd, content, tmp);
    if (::fsync(fd) != 0) sys_fail("fsync", tmp);
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    sys_fail("rename to", path);
  }
  fsync_dir(dir);
}

void append_line_durable(const fs::path& path, const std::string& line) {
  if (line.find('\n') != std::string::npos) throw std::logic_error("append_line_durable: line has a newline");
  const fs::path dir = path.parent_path();
  if (!dir.empty()) fs::create_directories(dir);
  const bool existed = fs::exists(path);
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND, 0644);
  if (fd < 0) sys_fail("open", path);
  try {
    // A crash may have left a torn last line: start ours on a line of its own, so the torn one
    // stays the only casualty.
    std::string text = line + "\n";
    const off_t size = ::lseek(fd, 0, SEEK_END);
    char last = '\n';
    if (size > 0 && ::pread(fd, &last, 1, size - 1) == 1 && last != '\n') text.insert(0, "\n");
    write_all(fd, text, path);  // one write with O_APPEND: whole lines or (crash) a torn last line
    if (::fsync(fd) != 0) sys_fail("fsync", path);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  if (!existed) fsync_dir(dir);
}

std::string ReadProblem::to_string() const {
  return line > 0 ? fmt::format("{}:{}: {}", file, line, reason) : fmt::format("{}: {}", file, reason);
}

std::vector<std::string> validate_record(const nlohmann::json& r) {
  static const MiniSchema schema(parse_json_strict(embedded_record_schema(), "schemas/record.schema.json"));
  std::vector<std::string> errs;
  if (!r.is_object()) return {"a record is a JSON object"};
  if (r.value("schema", "") != kRecordSchema) errs.push_back(fmt::format("/schema: expected \"{}\"", kRecordSchema));
  if (!r.contains("schema_version") || !r["schema_version"].is_number_integer() ||
      r["schema_version"].get<int>() != kRecordSchemaVersion)
    errs.push_back(fmt::format("/schema_version: this reader understands version {}", kRecordSchemaVersion));
  const std::string h = check_record_hash(r);
  if (!h.empty()) errs.push_back("/record_sha256: " + h);
  for (auto& e : schema.validate(r)) errs.push_back(std::move(e));
  return errs;
}

namespace {
void collect(const fs::path& p, std::vector<fs::path>& files, std::vector<ReadProblem>& problems) {
  std::error_code ec;
  if (fs::is_directory(p, ec)) {
    std::vector<fs::path> found;
    // In a folder, record files are *.jsonl; single-record *.json files are read only when named
    // (a folder may also hold unsealed sources, like results/reported/sources/).
    for (const auto& e : fs::recursive_directory_iterator(p))
      if (e.is_regular_file() && e.path().extension() == ".jsonl") found.push_back(e.path());
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
  } else if (fs::exists(p, ec)) {
    files.push_back(p);
  } else {
    problems.push_back({p.string(), 0, "no such file or folder"});
  }
}

void take(RecordSet& out, nlohmann::json rec, const std::string& file, std::int64_t line) {
  auto errs = validate_record(rec);
  if (!errs.empty()) {
    std::string joined;
    for (std::size_t i = 0; i < errs.size() && i < 5; ++i) joined += (i ? "; " : "") + errs[i];
    if (errs.size() > 5) joined += fmt::format("; and {} more", errs.size() - 5);
    out.problems.push_back({file, line, "rejected: " + joined});
    return;
  }
  out.records.push_back(std::move(rec));
  out.origins.push_back(line > 0 ? fmt::format("{}:{}", file, line) : file);
}
}  // namespace

RecordSet read_records(const std::vector<std::string>& paths) {
  RecordSet out;
  std::vector<fs::path> files;
  for (const auto& p : paths) collect(p, files, out.problems);
  for (const auto& f : files) {
    std::string text;
    try {
      text = read_text_file(f);
    } catch (const std::exception& e) {
      out.problems.push_back({f.string(), 0, e.what()});
      continue;
    }
    if (f.extension() == ".json") {
      try {
        auto doc = parse_json_strict(text, f.string());
        if (doc.is_array())
          for (std::size_t i = 0; i < doc.size(); ++i) take(out, doc[i], f.string() + fmt::format("[{}]", i), 0);
        else
          take(out, std::move(doc), f.string(), 0);
      } catch (const InputError& e) {
        out.problems.push_back({f.string(), 0, e.reason()});
      }
      continue;
    }
    std::int64_t lineno = 0;
    std::size_t pos = 0;
    while (pos < text.size()) {
      const std::size_t nl = text.find('\n', pos);
      const bool complete = nl != std::string::npos;
      const std::string line = text.substr(pos, complete ? nl - pos : std::string::npos);
      pos = complete ? nl + 1 : text.size();
      ++lineno;
      if (line.empty()) continue;
      try {
        take(out, parse_json_strict(line, f.string()), f.string(), lineno);
      } catch (const InputError& e) {
        out.problems.push_back({f.string(), lineno,
                                complete ? "not a JSON record: " + e.reason()
                                         : "truncated last line (an interrupted write); skipped"});
      }
    }
  }
  return out;
}

}  // namespace mtabench
