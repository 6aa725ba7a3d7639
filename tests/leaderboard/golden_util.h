#pragma once
// Golden-file comparison: the text must match tests/golden/leaderboard/<name> byte for byte. With
// MTABENCH_UPDATE_GOLDEN=1 the file is rewritten instead (then review the diff and commit it).
#include "harness/json_strict.h"
#include "harness/storage.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>

namespace mtabench::golden {

inline std::filesystem::path golden_dir() {
  return std::filesystem::path(MTABENCH_SOURCE_DIR) / "tests" / "golden" / "leaderboard";
}

inline bool updating_golden() {
  const char* v = std::getenv("MTABENCH_UPDATE_GOLDEN");
  return v && std::string(v) == "1";
}

// The first line where two texts differ, for a readable failure.
inline std::string first_difference(const std::string& want, const std::string& got) {
  std::istringstream a(want), b(got);
  std::string la, lb;
  for (int line = 1;; ++line) {
    const bool ha = static_cast<bool>(std::getline(a, la)), hb = static_cast<bool>(std::getline(b, lb));
    if (!ha && !hb) return "texts differ only in their final newline";
    if (!ha || !hb || la != lb)
      return "line " + std::to_string(line) + ":\n  golden: " + (ha ? la : "<end>") +
             "\n  actual: " + (hb ? lb : "<end>");
  }
}

inline void expect_golden(const std::string& name, const std::string& actual) {
  const std::filesystem::path p = golden_dir() / name;
  if (updating_golden()) {
    atomic_write_file(p, actual);
    return;
  }
  ASSERT_TRUE(std::filesystem::exists(p))
      << p << " is missing: run with MTABENCH_UPDATE_GOLDEN=1 to create it";
  const std::string want = read_text_file(p);
  EXPECT_TRUE(want == actual) << name
                              << " differs from the golden file (MTABENCH_UPDATE_GOLDEN=1 rewrites it):\n"
                              << first_difference(want, actual);
}

}  // namespace mtabench::golden
