// `mtabench floor FILES... [--gpu NAME]`: headroom-v1 and headroom-v2 from the datasheet table;
// with a local GPU and no --gpu, also the floors from ceilings measured now.
#include "harness/cli/commands.h"
#include "harness/cuda_check.h"
#include "harness/device.h"
#include "harness/floor.h"
#include "harness/workload.h"

#include <fmt/core.h>

namespace mtabench::cli {

namespace {
std::string us(double s) { return s < 1e-6 ? fmt::format("{:.1f} ns", s * 1e9) : fmt::format("{:.3f} us", s * 1e6); }
void print(const Workload& w, const Floor& v1, const Floor& v2) {
  fmt::print("{:<30} {:<11} v1 {:>12} ({:.0f} B) | v2 {:>12} bound by {:<6}", w.name, v2.ceilings_kind, us(v1.seconds),
             v1.terms[0].amount, us(v2.seconds), v2.bound_by);
  for (const auto& t : v2.terms) fmt::print(" {}={}", t.name, us(t.seconds));
  fmt::print("\n");
}
}  // namespace

void add_floor(CLI::App& app, AppContext& ctx) {
  auto files = std::make_shared<std::vector<std::string>>();
  auto gpu = std::make_shared<std::string>();
  auto tf32 = std::make_shared<bool>(false);
  auto* sub = app.add_subcommand("floor", "Print the roofline floors of workloads (headroom-v1, headroom-v2)");
  sub->add_option("paths", *files, "Workload files or folders")->required();
  sub->add_option("--gpu", *gpu, "A GPU of the datasheet table (id or name, e.g. h200-sxm, \"NVIDIA GeForce RTX 3090\")");
  sub->add_flag("--tf32", *tf32, "fp32 math on TF32 tensor cores");
  sub->callback([&ctx, files, gpu, tf32] {
    const auto ws = load_workloads(*files);
    std::string why;
    const bool local = gpu->empty() && cuda_device_available(&why);
    std::optional<DeviceInfo> dev;
    if (local) dev = query_device(0);
    const std::string name = !gpu->empty() ? *gpu : dev ? dev->name : "";
    if (name.empty()) {
      fmt::print(stderr, "mtabench floor: no GPU here ({}); name one with --gpu. Known:", why);
      for (const auto& d : datasheets()) fmt::print(stderr, " {}", d.id);
      fmt::print(stderr, "\n");
      ctx.rc = 2;
      return;
    }
    const Datasheet* d = find_datasheet(name);
    if (!d && !dev) {
      fmt::print(stderr, "mtabench floor: \"{}\" is not in the datasheet table (harness/data/gpu-datasheets.json)\n", name);
      ctx.rc = 2;
      return;
    }
    if (d) fmt::print("Datasheet: {} — {}\n", d->id, d->source);
    std::optional<MeasuredCeilings> m;
    if (dev) {
      cudaStream_t s;
      MTABENCH_CUDA_CALL(cudaStreamCreate(&s));
      m = measure_ceilings(*dev, s);
      fmt::print("Measured on {}: {}\n  copy {:.0f} GB/s, empty kernel {:.2f} us\n", dev->name, m->method,
                 m->copy_bytes_per_s / 1e9, m->empty_kernel_s * 1e6);
    }
    fmt::print("headroom-v1: every declared tensor once over bandwidth. headroom-v2: max(causal bytes / bandwidth, "
               "FLOPs / fastest unit, exps / MUFU rate, one launch).\n");
    for (const auto& w : ws) {
      if (d) {
        const Ceilings c = datasheet_ceilings(*d, w.dtype, *tf32);
        print(w, headroom_v1(w, c), headroom_v2(w, c));
      }
      if (m) {
        const Ceilings c = measured_ceilings(*dev, *m, w.dtype, *tf32);
        print(w, headroom_v1(w, c), headroom_v2(w, c));
      }
    }
    ctx.rc = 0;
  });
}

}  // namespace mtabench::cli
