#include "harness/app.h"

#include "harness/cli/commands.h"
#include "harness/json_strict.h"

#include <fmt/core.h>

#include <exception>

namespace mtabench {

int run_app(int argc, char** argv, const Registry& registry) {
  std::string cmdline;
  for (int i = 0; i < argc; ++i) cmdline += (i ? " " : "") + std::string(argv[i]);
  cli::AppContext ctx{registry, cmdline};
  CLI::App app{"mtabench: benchmark harness and leaderboard runner for multi-token attention "
               "(liger-mta-fwd-v1)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "mtabench " + std::string(MTABENCH_VERSION_STRING));
  cli::add_list(app, ctx);
  cli::add_run(app, ctx);
  cli::add_floor(app, ctx);
  cli::add_validate(app, ctx);
  cli::add_leaderboard(app, ctx);
  cli::add_compare(app, ctx);
  cli::add_seal(app, ctx);
  cli::add_hidden(app, ctx);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version are "errors" that exit 0; every real usage error exits 2.
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const InputError& e) {
    fmt::print(stderr, "mtabench: error: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "mtabench: error: {}\n", e.what());
    return 2;
  }
  return ctx.rc;
}

}  // namespace mtabench
