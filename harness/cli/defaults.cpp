#include "harness/build_info.h"
#include "harness/cli/commands.h"

#include <filesystem>

namespace mtabench::cli {

std::string workloads_dir() {
  namespace fs = std::filesystem;
  if (fs::is_directory("workloads") && fs::exists("workloads/seed.json")) return "workloads";
  return (fs::path(build_info::source_dir()) / "workloads").string();
}

std::vector<std::string> default_workload_paths(bool gpu) {
  const std::string d = workloads_dir();
  if (!gpu) return {d + "/smoke.json"};
  return {d + "/seed.json", d + "/seq-sweep.json", d + "/shapes.json"};
}

}  // namespace mtabench::cli
