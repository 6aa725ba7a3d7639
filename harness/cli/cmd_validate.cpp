// `mtabench validate FILES...`: schema, version and hash of every record; names what is wrong.
#include "harness/cli/commands.h"
#include "harness/storage.h"

#include <fmt/core.h>

namespace mtabench::cli {

void add_validate(CLI::App& app, AppContext& ctx) {
  auto files = std::make_shared<std::vector<std::string>>();
  auto* sub = app.add_subcommand("validate", "Check records (schema, version, sha256); exit 1 if any is bad");
  sub->add_option("paths", *files, "Record files (.jsonl, .json) or folders")->required();
  sub->callback([&ctx, files] {
    const RecordSet rs = read_records(*files);
    for (const auto& p : rs.problems) fmt::print("INVALID {}\n", p.to_string());
    fmt::print("{} valid record(s), {} problem(s)\n", rs.records.size(), rs.problems.size());
    ctx.rc = rs.problems.empty() ? 0 : 1;
  });
}

}  // namespace mtabench::cli
