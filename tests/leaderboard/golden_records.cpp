#include "golden_records.h"

#include "harness/device.h"
#include "harness/record.h"
#include "harness/runner.h"
#include "harness/stats.h"
#include "harness/workload.h"

#include <cmath>
#include <optional>
#include <string>

namespace mtabench::golden {

using json = nlohmann::json;

namespace {

// Deterministic uniform numbers (the same on every platform, unlike std distributions).
struct SplitMix {
  std::uint64_t state;
  double uniform() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return static_cast<double>(z >> 11) / 9007199254740992.0;  // 53 bits -> [0, 1)
  }
};

struct Timing {
  double median = 0;     // the centre of the samples, seconds
  double spread = 0.02;  // samples uniform in median * (1 +- spread)
  int n = 40;
  std::uint64_t seed = 1;
  bool keep_samples = true;
  int outlier_every = 0;  // every k-th sample is `outlier_factor` times slower (a noisy run)
  double outlier_factor = 2;
};

std::vector<double> make_samples(const Timing& t) {
  SplitMix rng{t.seed * 0x2545f4914f6cdd1dull + 7};
  std::vector<double> xs;
  for (int i = 0; i < t.n; ++i) {
    double x = t.median * (1 + t.spread * (2 * rng.uniform() - 1));
    if (t.outlier_every > 0 && i % t.outlier_every == 0) x *= t.outlier_factor;
    xs.push_back(std::round(x * 1e12) / 1e12);  // picosecond resolution keeps the files short
  }
  return xs;
}

json timing_json(const Timing& t) {
  const std::vector<double> xs = make_samples(t);
  const Summary s = summarize(xs);
  json j{{"protocol", "mtabench-median-v1"},
         {"mode", "device-events"},
         {"device",
          {{"n", s.n},
           {"median_s", s.median},
           {"p20_s", s.p20},
           {"p80_s", s.p80},
           {"min_s", s.min},
           {"max_s", s.max},
           {"mean_s", s.mean},
           {"stdev_s", s.stdev},
           {"cv", s.cv},
           {"median_ci95_low_s", s.ci_low},
           {"median_ci95_high_s", s.ci_high},
           {"median_ci95_rel_halfwidth", std::isfinite(s.ci_rel_halfwidth) ? s.ci_rel_halfwidth : -1.0}}},
         {"warmup_calls", 3},
         {"stop_reason", "converged"}};
  if (t.keep_samples) j["samples_s"] = xs;
  return j;
}

Workload workload(std::int64_t seq) {
  Workload w;
  w.name = seq == 32 ? "seed" : "sweep";
  w.k = 3;
  w.seq = seq;
  w.batch = 2;
  w.heads_in = 4;
  w.heads_out = 4;
  w.dtype = DType::bf16;
  w.tags = {seq == 32 ? "leaderboard-seed" : "seq-sweep"};
  w.source = seq == 32 ? "workloads/seed.json" : "workloads/seq-sweep.json";
  return w;
}

DeviceInfo h200() {
  DeviceInfo d;
  d.name = "NVIDIA H200";
  d.uuid = "GPU-00000000-0000-0000-0000-golden000001";
  d.cc_major = 9;
  d.sm_count = 132;
  d.memory_bytes = 150754820096;
  d.l2_bytes = 62914560;
  d.max_sm_clock_mhz = 1980;
  d.power_limit_w = 700;
  d.nvml_status = "ok";
  return d;
}

MeasuredCeilings h200_ceilings() {
  MeasuredCeilings m;
  m.copy_bytes_per_s = 4.25e12;
  m.copy_bytes = 1 << 30;
  m.empty_kernel_s = 2.72e-6;
  m.method = "golden fixture: the SPEC §8 figures";
  return m;
}

struct Impl {
  std::string name, language = "cuda", license = "Apache-2.0";
};

enum class Where { h200, cpu };

struct Spec {
  Spec(std::string run, std::string time, Impl i, std::int64_t s, Where w, std::optional<Timing> t,
       std::string out = kPassed, std::string why = "")
      : run_id(std::move(run)),
        timestamp(std::move(time)),
        impl(std::move(i)),
        seq(s),
        where(w),
        timing(t),
        outcome(std::move(out)),
        reason(std::move(why)) {}
  std::string run_id, timestamp;
  Impl impl;
  std::int64_t seq;
  Where where;
  std::optional<Timing> timing;
  std::string outcome, reason;
  std::string workload_name;  // when set, the record's workload name (one identity, another name)
  json trust = {{"level", "measured"}, {"source", nullptr}};
  json gpu_processes = nullptr;  // timing.gpu_processes when set (a shared GPU)
};

json make_record(const Spec& s) {
  const Workload w = workload(s.seq);
  json wl = w.to_json();
  if (!s.workload_name.empty()) wl["name"] = s.workload_name;
  wl["identity"] = w.identity();
  wl["source"] = w.source;
  const bool gpu = s.where == Where::h200;
  const DeviceInfo dev = h200();
  json timing = nullptr;
  std::optional<double> median;
  const bool reported = s.trust["level"] == "reported";
  if (s.timing) {
    timing = timing_json(*s.timing);
    median = reported ? s.timing->median : timing["device"]["median_s"].get<double>();
  }
  json floor;
  if (gpu) {
    floor = floor_block(w, false, dev,
                        reported ? std::nullopt : std::optional<MeasuredCeilings>(h200_ceilings()), median);
  } else {
    floor = floor_block(w, false, std::nullopt, std::nullopt, median);
  }
  json prov{
      {"harness",
       {{"name", "mtabench"}, {"version", "0.1.0"}, {"git_commit", "0000000golden"}, {"git_dirty", false}}},
      {"device", gpu ? dev.to_json() : json(nullptr)},
      {"hardware_key", gpu ? dev.hardware_key() : "cpu-golden-epyc-8t"},
      {"host", {{"os", "golden fixture"}, {"cpu", "Golden EPYC"}, {"cpu_threads", 8}}},
      {"timestamp_utc", s.timestamp},
      {"command_line", "tests/leaderboard/golden_records.cpp"},
      {"input_seeds", {{"seed", 1}}}};
  json impl{{"name", s.impl.name},
            {"version", "golden"},
            {"language", s.impl.language},
            {"license", s.impl.license},
            {"source", "tests/leaderboard/golden_records.cpp"},
            {"tf32", false}};
  if (!gpu) impl["location"] = "host";
  json rec{{"run_id", s.run_id}, {"workload", wl},    {"implementation", impl}, {"outcome", s.outcome},
           {"reason", s.reason}, {"timing", timing},  {"correctness", nullptr}, {"floor", floor},
           {"trust", s.trust},   {"provenance", prov}};
  if (!gpu) rec["timing"]["mode"] = "host-wall";  // host implementations are timed by the wall clock
  if (!s.gpu_processes.is_null()) rec["timing"]["gpu_processes"] = s.gpu_processes;
  if (reported)                                   // a source gives a median and its protocol, nothing more
    rec["timing"] = {{"protocol", s.trust["source"]["protocol"]},
                     {"mode", "reported"},
                     {"device", {{"median_s", *median}}},
                     {"stop_reason", "reported"}};
  return seal_record(std::move(rec));
}

Timing timing(double median_us, std::uint64_t seed, double spread = 0.02, int n = 40) {
  Timing t;
  t.median = median_us * 1e-6;
  t.seed = seed;
  t.spread = spread;
  t.n = n;
  return t;
}

Timing without_samples(Timing t) {
  t.keep_samples = false;
  return t;
}

const char* kRun1 = "20250501T100000Z-golden01";
const char* kRun2 = "20250510T090000Z-golden02";
const char* kRun3 = "20250515T080000Z-golden03";
const Impl kCudnn{"cudnn"}, kFused{"fused"}, kFusedV2{"fused-v2"}, kTritonMta{"triton-mta", "triton", "MIT"},
    kFastWrong{"fast-and-wrong"}, kBroken{"broken"}, kShared{"shared-gpu"}, kLiger{"liger", "triton", "BSD-2-Clause"},
    kRefCpu{"reference-cpu", "c++"};

}  // namespace

std::vector<json> leaderboard_records() {
  std::vector<json> out;
  // H200, seed workload (seq 32): the record changes hands once, is reproduced, is challenged
  // within noise, and sees every kind of ineligible record.
  out.push_back(make_record(Spec(kRun1, "2025-05-01T10:00:00Z", kCudnn, 32, Where::h200, timing(20.0, 1))));
  out.push_back(make_record(Spec(kRun1, "2025-05-01T10:01:00Z", kFused, 32, Where::h200, timing(10.5, 2))));
  out.push_back(make_record(Spec(kRun2, "2025-05-10T09:00:00Z", kFused, 32, Where::h200, timing(10.55, 3))));
  out.push_back(
      make_record(Spec(kRun3, "2025-05-15T08:00:00Z", kFusedV2, 32, Where::h200, timing(10.45, 4))));
  Timing noisy = timing(8.0, 5);
  noisy.outlier_every = 4;  // a quarter of the samples twice as slow: CV far over 5%
  out.push_back(make_record(Spec(kRun3, "2025-05-15T08:01:00Z", kTritonMta, 32, Where::h200, noisy)));
  out.push_back(
      make_record(Spec(kRun3, "2025-05-15T08:02:00Z", kFastWrong, 32, Where::h200, timing(1.0, 6))));
  out.push_back(make_record(Spec(kRun3, "2025-05-15T08:03:00Z", kBroken, 32, Where::h200, std::nullopt,
                                 kIncorrect, "relative L2 error 3.1e-01 over the bf16 tolerance 1e-02")));
  // Measured while another process held a context on the GPU: faster than the holder, and not
  // eligible (NVML's count is in the record).
  Spec shared(kRun3, "2025-05-15T08:04:00Z", kShared, 32, Where::h200, timing(9.5, 14));
  shared.gpu_processes = {{"before", 2}, {"after", 1}};
  out.push_back(make_record(shared));
  Spec reported{"reported-golden", "2025-04-28T00:00:00Z",         kLiger, 32,
                Where::h200,       without_samples(timing(9.0, 7))};
  reported.trust = {{"level", "reported"},
                    {"source",
                     {{"title", "Golden fixture: a reported figure"},
                      {"url", "https://example.org/golden-source"},
                      {"observed", "2025-04-28"},
                      {"protocol", "the source's own protocol (median)"}}}};
  out.push_back(make_record(reported));
  // H200, seq 128 and 512: records without raw samples (the CI path), for scaling by seq.
  out.push_back(make_record(
      Spec(kRun2, "2025-05-10T09:02:00Z", kCudnn, 128, Where::h200, without_samples(timing(25.0, 8)))));
  out.push_back(make_record(
      Spec(kRun2, "2025-05-10T09:03:00Z", kFused, 128, Where::h200, without_samples(timing(14.6, 9)))));
  out.push_back(make_record(
      Spec(kRun2, "2025-05-10T09:04:00Z", kCudnn, 512, Where::h200, without_samples(timing(110.0, 10)))));
  out.push_back(make_record(
      Spec(kRun2, "2025-05-10T09:05:00Z", kFused, 512, Where::h200, without_samples(timing(62.0, 11)))));
  // A CPU board: no floor; two runs that agree (reproduced).
  out.push_back(
      make_record(Spec(kRun1, "2025-05-01T11:00:00Z", kRefCpu, 32, Where::cpu, timing(250.0, 12, 0.04))));
  out.push_back(
      make_record(Spec(kRun2, "2025-05-10T10:00:00Z", kRefCpu, 32, Where::cpu, timing(251.0, 13, 0.04))));
  return out;
}

namespace {
const char* kBaseRun = "20250520T000000Z-base0001";
const char* kNewRun = "20250521T000000Z-new00001";
Spec base(const Impl& impl, std::int64_t seq, std::optional<Timing> t) {
  return Spec(kBaseRun, "2025-05-20T00:00:00Z", impl, seq, Where::h200, t);
}
Spec next(const Impl& impl, std::int64_t seq, std::optional<Timing> t) {
  return Spec(kNewRun, "2025-05-21T00:00:00Z", impl, seq, Where::h200, t);
}
}  // namespace

std::vector<json> compare_base() {
  return {make_record(base(kFused, 64, timing(12.0, 21))),
          make_record(base(kFused, 128, timing(14.6, 22))),
          make_record(base(kFused, 256, timing(30.0, 23))),
          make_record(base(kFused, 512, timing(62.0, 24, 0.02, 10))),
          make_record(base(kCudnn, 64, timing(20.0, 25, 0.005))),
          make_record(base(kCudnn, 128, without_samples(timing(25.0, 26, 0.01)))),
          make_record(base(kCudnn, 256, timing(50.0, 27))),
          make_record(base(kCudnn, 512, timing(110.0, 28)))};
}

std::vector<json> compare_new() {
  Spec failing = next(kCudnn, 256, std::nullopt);
  failing.outcome = kIncorrect;
  failing.reason = "masked region not zero: 12 elements";
  // The same case again in the same second under another name (as the seed and the sweep's seq
  // 32 share an identity): compare names the case by both and marks the side's median.
  Spec alias = next(kFused, 64, timing(12.0, 38));
  alias.workload_name = "sweep-seq64";
  return {make_record(next(kFused, 64, timing(12.0, 31))),            // same
          make_record(alias),                                         // same, either way
          make_record(next(kFused, 128, timing(17.5, 32))),           // slower, +20%
          make_record(next(kFused, 256, timing(25.5, 33))),           // faster, -15%
          make_record(next(kFused, 512, timing(68.2, 43, 0.5, 10))),  // +10% but too noisy: unsure
          make_record(next(kCudnn, 64, timing(20.4, 35, 0.005))),     // +2%, significant: same
          make_record(next(kCudnn, 128, without_samples(timing(30.0, 36, 0.01)))),  // slower by the CIs
          make_record(failing),                                                     // failing
          make_record(next(kFused, 1024, timing(240.0, 37)))};  // added; cudnn 512 removed
}

}  // namespace mtabench::golden
