// `mtabench list [FILES...]`: the workloads found and the implementations, with what each
// supports on this machine.
#include "harness/cli/commands.h"
#include "harness/device.h"
#include "harness/workload.h"

#include <fmt/core.h>

namespace mtabench::cli {

void add_list(CLI::App& app, AppContext& ctx) {
  auto* sub = app.add_subcommand("list", "List workloads (name, identity, shape) and implementations with their support here");
  auto files = std::make_shared<std::vector<std::string>>();
  sub->add_option("paths", *files, "Workload files or folders (default: the default suite)");
  sub->callback([&ctx, files] {
    std::string why;
    const bool gpu = cuda_device_available(&why);
    std::optional<DeviceInfo> dev;
    if (gpu) dev = query_device(0);
    const auto paths = files->empty() ? default_workload_paths(gpu) : *files;
    const auto ws = load_workloads(paths);
    fmt::print("Device: {}\n\n", dev ? fmt::format("{} ({} SMs, {:.0f} GiB, sm_{}{})", dev->name, dev->sm_count,
                                                   dev->memory_bytes / 1073741824.0, dev->cc_major, dev->cc_minor)
                                     : "none (" + why + "): host implementations only");
    fmt::print("Workloads ({}):\n{:<30} {:<14} {:<34} {}\n", ws.size(), "name", "identity", "shape", "source");
    for (const auto& w : ws)
      fmt::print("{:<30} {:<14} {:<34} {}\n", w.name, w.identity().substr(0, 12), w.shape_string(), w.source);
    fmt::print("\nImplementations ({}):\n", ctx.registry.size());
    for (const auto& e : ctx.registry) {
      const auto impl = e.make();
      const ImplInfo i = impl->info();
      int ok = 0;
      std::string first_no;
      for (const auto& w : ws) {
        const Support s = impl->check_support(w, dev ? &*dev : nullptr);
        if (s.ok) ++ok;
        else if (first_no.empty()) first_no = w.name + ": " + s.reason;
      }
      fmt::print("  {:<14} {:<5} {:<7} {:<11} tf32={:<5} supports {}/{} here{}\n    {}\n", i.name, i.language,
                 i.location == Location::host ? "host" : "device", i.license, i.tf32 ? "yes" : "no", ok, ws.size(),
                 first_no.empty() ? "" : " (e.g. " + first_no + ")", i.description);
    }
    ctx.rc = 0;
  });
}

}  // namespace mtabench::cli
