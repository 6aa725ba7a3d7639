// The children `run` starts (not for users): `__probe` measures a GPU's ceilings, `__case` runs
// one case and writes its record.
#include "harness/cli/commands.h"
#include "harness/suite.h"

namespace mtabench::cli {

void add_hidden(CLI::App& app, AppContext& ctx) {
  auto probe_dev = std::make_shared<int>(0);
  auto probe_out = std::make_shared<std::string>();
  auto* probe = app.add_subcommand("__probe", "")->group("");
  probe->add_option("--device", *probe_dev)->required();
  probe->add_option("--out", *probe_out)->required();
  probe->callback([&ctx, probe_dev, probe_out] { ctx.rc = child_probe(*probe_dev, *probe_out); });

  auto spec = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  auto* cs = app.add_subcommand("__case", "")->group("");
  cs->add_option("--spec", *spec)->required();
  cs->add_option("--out", *out)->required();
  cs->callback([&ctx, spec, out] { ctx.rc = child_case(*spec, *out, ctx.registry); });
}

}  // namespace mtabench::cli
