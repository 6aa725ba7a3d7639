// `mtabench leaderboard` — see issue 8; filled in by harness/leaderboard/.
#include "harness/cli/commands.h"

namespace mtabench::cli {
void add_leaderboard(CLI::App& app, AppContext& ctx) { (void)app, (void)ctx; }
void add_compare(CLI::App& app, AppContext& ctx) { (void)app, (void)ctx; }
}  // namespace mtabench::cli
