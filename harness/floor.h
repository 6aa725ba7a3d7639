#pragma once
// Roofline floors (SPEC §5): lower bounds on the time of one call.
//   headroom-v1: every declared tensor crosses device memory once at the bandwidth (the
//                leaderboard page's rule, computed as written: it includes y).
//   headroom-v2: bytes that must move (causal lower triangle of scores with the diagonal, all
//                of y, weight, bias) over bandwidth; multiply-adds on or below the diagonal over
//                the fastest unit for the dtype; one exp per score read over the MUFU rate; one
//                kernel launch. The floor is the largest term.
#include "harness/workload.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace mtabench {

struct DeviceInfo;
struct MeasuredCeilings;

// A row of harness/data/gpu-datasheets.json.
struct Datasheet {
  std::string id;
  std::vector<std::string> names;
  double mem_bytes_per_s = 0, fp32_flops = 0, bf16_tensor_flops = 0, fp16_tensor_flops = 0,
         tf32_tensor_flops = 0;
  int sm_count = 0, boost_mhz = 0;
  std::string source;
  double exp_per_s() const { return 16.0 * sm_count * boost_mhz * 1e6; }
};
const std::vector<Datasheet>& datasheets();
// By id or device name (exact, then case-insensitive substring); nullptr if none.
const Datasheet* find_datasheet(const std::string& name_or_id);

struct Ceilings {
  std::string kind;    // "datasheet" or "measured"
  std::string source;  // where each figure comes from
  double mem_bytes_per_s = 0;
  double math_flops = 0;         // fastest unit for the dtype (see math_unit)
  std::string math_unit;         // "bf16 tensor cores", "fp32 FMA", ...
  double exp_per_s = 0;
  std::optional<double> launch_s;  // measured only: an empty kernel under the timing protocol
};
// Datasheet ceilings for a dtype (tf32: fp32 may use TF32 tensor cores).
Ceilings datasheet_ceilings(const Datasheet& d, DType t, bool tf32);
// Measured bandwidth and launch; math and exp rates from the datasheet when the device has one,
// else from the device (SMs x clock x per-SM rates of its architecture).
Ceilings measured_ceilings(const DeviceInfo& dev, const MeasuredCeilings& m, DType t, bool tf32);

struct FloorTerm {
  std::string name;  // memory, math, exp, launch
  double amount = 0;  // bytes, FLOPs, exps, launches
  double rate = 0;    // per second
  double seconds = 0;
};

struct Floor {
  std::string model;  // headroom-v1 | headroom-v2
  std::string ceilings_kind;
  double seconds = 0;
  std::string bound_by;
  std::vector<FloorTerm> terms;
  nlohmann::json to_json() const;
};

double bytes_v1(const Workload& w);  // every declared tensor once
double bytes_v2(const Workload& w);  // causal scores, all of y, weight, bias
double flops_v2(const Workload& w);  // 2 * heads_in * k^2 per output on or below the diagonal
double exps_v2(const Workload& w);   // one per score on or below the diagonal

Floor headroom_v1(const Workload& w, const Ceilings& c);
Floor headroom_v2(const Workload& w, const Ceilings& c);

}  // namespace mtabench
