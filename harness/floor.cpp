#include "harness/floor.h"

#include "harness/device.h"
#include "harness/json_strict.h"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>

namespace mtabench {

const char* embedded_gpu_datasheets();  // generated from harness/data/gpu-datasheets.json

const std::vector<Datasheet>& datasheets() {
  static const std::vector<Datasheet> table = [] {
    const auto doc = parse_json_strict(embedded_gpu_datasheets(), "harness/data/gpu-datasheets.json");
    std::vector<Datasheet> v;
    for (const auto& g : doc.at("gpus")) {
      Datasheet d;
      d.id = g.at("id").get<std::string>();
      d.names = g.at("names").get<std::vector<std::string>>();
      d.mem_bytes_per_s = g.at("mem_bytes_per_s").get<double>();
      d.fp32_flops = g.at("fp32_flops").get<double>();
      d.bf16_tensor_flops = g.at("bf16_tensor_flops").get<double>();
      d.fp16_tensor_flops = g.at("fp16_tensor_flops").get<double>();
      d.tf32_tensor_flops = g.at("tf32_tensor_flops").get<double>();
      d.sm_count = g.at("sm_count").get<int>();
      d.boost_mhz = g.at("boost_mhz").get<int>();
      d.source = g.at("source").get<std::string>();
      v.push_back(std::move(d));
    }
    return v;
  }();
  return table;
}

namespace {
std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}
}  // namespace

// By id or by the exact device name (case-insensitive). Never by a part of a name: "NVIDIA H20"
// is not an H200, nor "NVIDIA A100-PCIE-40GB" an A10; an unknown device gets no datasheet
// (its floor then uses measured and estimated ceilings).
const Datasheet* find_datasheet(const std::string& q) {
  const std::string lq = lower(q);
  for (const auto& d : datasheets()) {
    if (lower(d.id) == lq) return &d;
    for (const auto& n : d.names)
      if (lower(n) == lq) return &d;
  }
  return nullptr;
}

namespace {
void math_for(const Datasheet& d, DType t, bool tf32, Ceilings& c) {
  switch (t) {
    case DType::bf16:
      c.math_flops = d.bf16_tensor_flops;
      c.math_unit = "bf16 tensor cores (dense)";
      break;
    case DType::fp16:
      c.math_flops = d.fp16_tensor_flops;
      c.math_unit = "fp16 tensor cores (dense)";
      break;
    case DType::fp32:
      c.math_flops = tf32 ? d.tf32_tensor_flops : d.fp32_flops;
      c.math_unit = tf32 ? "tf32 tensor cores (dense)" : "fp32 FMA";
      break;
  }
}
}  // namespace

Ceilings datasheet_ceilings(const Datasheet& d, DType t, bool tf32) {
  Ceilings c;
  c.kind = "datasheet";
  c.source = fmt::format("{} ({})", d.id, d.source);
  c.mem_bytes_per_s = d.mem_bytes_per_s;
  c.exp_per_s = d.exp_per_s();
  math_for(d, t, tf32, c);
  return c;
}

Ceilings measured_ceilings(const DeviceInfo& dev, const MeasuredCeilings& m, DType t, bool tf32) {
  Ceilings c;
  c.kind = "measured";
  c.mem_bytes_per_s = m.copy_bytes_per_s;
  c.launch_s = m.empty_kernel_s;
  c.exp_per_s = 16.0 * dev.sm_count * dev.max_sm_clock_mhz * 1e6;
  if (const Datasheet* d = find_datasheet(dev.name)) {
    math_for(*d, t, tf32, c);
    c.source = fmt::format("bandwidth and launch measured here ({}); math rate from datasheet {}; exp "
                           "rate 16/SM/clock x {} SMs x {} MHz",
                           m.method, d->id, dev.sm_count, dev.max_sm_clock_mhz);
  } else {
    // No datasheet: per-SM rates of the architecture (CUDA C++ Programming Guide throughput
    // table; tensor rates from the architecture whitepapers), times SMs and clock.
    const double per_sm_clock_fp32 = 2.0 * 128;  // FMA lanes x 2 FLOPs (sm_86+); sm_80 has 64
    const double fp32 = (dev.cc_major == 8 && dev.cc_minor == 0 ? 2.0 * 64 : per_sm_clock_fp32) *
                        dev.sm_count * dev.max_sm_clock_mhz * 1e6;
    const double tensor_per_sm_clock = dev.cc_major >= 9 ? 4096.0 : (dev.cc_major == 8 && dev.cc_minor == 0 ? 2048.0 : 1024.0);
    const double tensor = tensor_per_sm_clock * dev.sm_count * dev.max_sm_clock_mhz * 1e6;
    c.math_flops = t == DType::fp32 ? (tf32 ? tensor / 2 : fp32) : tensor;
    c.math_unit = t == DType::fp32 ? (tf32 ? "tf32 tensor cores (estimated)" : "fp32 FMA (estimated)")
                                   : "16-bit tensor cores (estimated)";
    c.source = fmt::format("bandwidth and launch measured here ({}); no datasheet for \"{}\": math "
                           "rate estimated from SMs x clock x per-SM rate",
                           m.method, dev.name);
  }
  return c;
}

double bytes_v1(const Workload& w) {
  return static_cast<double>(w.scores_elems() + w.y_elems() + w.weight_elems() + w.bias_elems()) *
         static_cast<double>(dtype_size(w.dtype));
}
double bytes_v2(const Workload& w) {
  const double causal = static_cast<double>(w.causal_elems_per_plane());
  return (static_cast<double>(w.batch * w.heads_in) * causal + static_cast<double>(w.y_elems()) +
          static_cast<double>(w.weight_elems() + w.bias_elems())) *
         static_cast<double>(dtype_size(w.dtype));
}
double flops_v2(const Workload& w) {
  return 2.0 * static_cast<double>(w.heads_in) * w.k * w.k * static_cast<double>(w.batch * w.heads_out) *
         static_cast<double>(w.causal_elems_per_plane());
}
double exps_v2(const Workload& w) {
  return static_cast<double>(w.batch * w.heads_in) * static_cast<double>(w.causal_elems_per_plane());
}

namespace {
Floor finish(Floor f) {
  for (const auto& t : f.terms)
    if (t.seconds > f.seconds) {
      f.seconds = t.seconds;
      f.bound_by = t.name;
    }
  return f;
}
}  // namespace

Floor headroom_v1(const Workload& w, const Ceilings& c) {
  Floor f;
  f.model = "headroom-v1";
  f.ceilings_kind = c.kind;
  const double b = bytes_v1(w);
  f.terms.push_back({"memory", b, c.mem_bytes_per_s, b / c.mem_bytes_per_s});
  return finish(f);
}

Floor headroom_v2(const Workload& w, const Ceilings& c) {
  Floor f;
  f.model = "headroom-v2";
  f.ceilings_kind = c.kind;
  const double b = bytes_v2(w), fl = flops_v2(w), ex = exps_v2(w);
  f.terms.push_back({"memory", b, c.mem_bytes_per_s, b / c.mem_bytes_per_s});
  f.terms.push_back({"math", fl, c.math_flops, fl / c.math_flops});
  f.terms.push_back({"exp", ex, c.exp_per_s, ex / c.exp_per_s});
  if (c.launch_s) f.terms.push_back({"launch", 1, 1.0 / *c.launch_s, *c.launch_s});
  return finish(f);
}

nlohmann::json Floor::to_json() const {
  nlohmann::json terms_j = nlohmann::json::array();
  for (const auto& t : terms)
    terms_j.push_back({{"name", t.name}, {"amount", t.amount}, {"rate_per_s", t.rate}, {"seconds", t.seconds}});
  return {{"model", model}, {"ceilings", ceilings_kind}, {"seconds", seconds}, {"bound_by", bound_by}, {"terms", terms_j}};
}

}  // namespace mtabench
