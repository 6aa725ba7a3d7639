#pragma once
// The subcommands of `mtabench`, one file each. Each adds itself to the CLI11 app and, when
// chosen, sets `rc` to the process exit code.
#include "impls/impl.h"

#include <CLI/CLI.hpp>

#include <string>

namespace mtabench::cli {

struct AppContext {
  const Registry& registry;
  std::string command_line;
  int rc = 0;
};

void add_list(CLI::App& app, AppContext& ctx);
void add_run(CLI::App& app, AppContext& ctx);     // run and verify
void add_floor(CLI::App& app, AppContext& ctx);
void add_validate(CLI::App& app, AppContext& ctx);
void add_leaderboard(CLI::App& app, AppContext& ctx);
void add_compare(CLI::App& app, AppContext& ctx);
void add_seal(CLI::App& app, AppContext& ctx);    // seal hand-written (reported) records
void add_hidden(CLI::App& app, AppContext& ctx);  // __probe, __case: the children of `run`

// The default suite when `run` gets no paths: the GPU suite, or the smoke workloads on a
// machine without a GPU. Looks in ./workloads, then in the source tree the binary was built from.
std::vector<std::string> default_workload_paths(bool gpu);
std::string workloads_dir();

}  // namespace mtabench::cli
