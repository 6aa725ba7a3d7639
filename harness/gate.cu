#include "harness/cuda_check.h"
#include "harness/gate.h"
#include "harness/rng.h"
#include "harness/timing.h"
#include "impls/reference/reference_gpu.h"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <thread>

namespace mtabench {

std::string GateStep::reason() const {
  std::string r;
  if (!check.passed) r = check.cause + (check.first_bad >= 0 ? " (first bad element at index " + std::to_string(check.first_bad) + ")" : "");
  if (!mutated.empty()) {
    std::string names;
    for (const auto& m : mutated) names += (names.empty() ? "" : ", ") + m;
    r += std::string(r.empty() ? "" : "; ") + "inputs modified by the implementation: " + names;
  }
  return name + ": " + r;
}

nlohmann::json GateStep::to_json(const Workload& w) const {
  return {{"step", name}, {"passed", passed()}, {"check", check.to_json(w)}, {"mutated_inputs", mutated}};
}

nlohmann::json StreamProbe::to_json() const {
  return {{"ran", ran}, {"escaped", escaped}, {"call_waited", call_waited}, {"written_while_held", written_while_held},
          {"written_after_stream_end", written_after_stream_end}};
}

namespace {

// ---- device tensors ----------------------------------------------------------------------
class DeviceBackend final : public CaseBackend {
 public:
  DeviceBackend(const Workload& w, Implementation& impl, cudaStream_t stream, std::uint64_t seed)
      : w_(w), impl_(impl), stream_(stream), seed_(seed), t_(w), counter_(3 * sizeof(unsigned long long)) {
    MTABENCH_CUDA_CALL(cudaStreamCreateWithFlags(&observer_, cudaStreamNonBlocking));
    MTABENCH_CUDA_CALL(cudaHostAlloc(reinterpret_cast<void**>(&count_host_), sizeof(unsigned long long), cudaHostAllocDefault));
  }
  ~DeviceBackend() override {
    MTABENCH_CUDA_CALL_NOTHROW(cudaStreamDestroy(observer_));
    MTABENCH_CUDA_CALL_NOTHROW(cudaFreeHost(count_host_));
  }

  void generate(InputSets sets) override { generate_inputs_device(w_, seed_, sets, t_, stream_); }
  void poison() override { poison_output(t_, stream_); }
  void call() override { impl_.run(args(), stream_); }
  void sync() override { MTABENCH_CUDA_CALL(cudaDeviceSynchronize()); }
  TensorArgs args() { return {t_.scores.get(), t_.weight.get(), t_.bias.get(), t_.y.get()}; }

  std::vector<std::string> mutated_inputs(InputSets e) override {
    const InputScales s = input_scales(w_);
    std::vector<std::string> out;
    auto same = [&](const DeviceBuffer& b, std::int64_t n, rng::TensorId id, std::uint64_t set, float sd) {
      return fingerprint_device(b.get(), w_.dtype, n, stream_) ==
             fingerprint_generated(w_.dtype, n, rng::stream_key(seed_, id, set), sd, stream_);
    };
    if (!same(t_.scores, w_.scores_elems(), rng::kScores, e.scores, s.scores)) out.push_back("scores");
    if (!same(t_.weight, w_.weight_elems(), rng::kWeight, e.params, s.weight)) out.push_back("weight");
    if (!same(t_.bias, w_.bias_elems(), rng::kBias, e.params, s.bias)) out.push_back("bias");
    return out;
  }
  HostInputs inputs() override { return download_inputs(w_, t_); }
  HostTensor output() override { return download_output(w_, t_); }

  std::optional<HostTensor> reference_fp32() override {
    if (!ref_out_.get()) {
      ref_out_ = DeviceBuffer(static_cast<std::size_t>(w_.y_elems()) * sizeof(float));
      ref_scratch_ = DeviceBuffer(reference::scratch_bytes(w_));
    }
    TensorArgs a = args();
    a.y = ref_out_.get();
    reference::run_gpu(w_, a, ref_scratch_.get(), /*out_fp32=*/true, stream_);
    HostTensor y(DType::fp32, static_cast<std::size_t>(w_.y_elems()));
    MTABENCH_CUDA_CALL(cudaStreamSynchronize(stream_));
    MTABENCH_CUDA_CALL(cudaMemcpy(y.data(), ref_out_.get(), y.size_bytes(), cudaMemcpyDeviceToHost));
    return y;
  }

  // The call with the harness's stream held: everything the call enqueues on that stream waits,
  // so an output that changes meanwhile was written by work on another stream.
  // Also counts, in stream order right after the call, how much of y the call had written when
  // the stream reached its end: work forked elsewhere and not joined back finishes later.
  StreamProbe probe_call() override {
    StreamProbe p;
    p.ran = true;
    const std::int64_t n = w_.y_elems();
    auto* counter = static_cast<unsigned long long*>(counter_.get());  // observer, stream end, final
    MTABENCH_CUDA_CALL(cudaDeviceSynchronize());
    // Once before the hold, so that the counting kernel is loaded now: with lazy module loading
    // (the default since CUDA 12.2) its first launch waits for the device, i.e. for the hold.
    if (count_written_device(t_, w_.dtype, n, counter, count_host_, observer_) != 0)
      throw std::runtime_error("harness: the output was not poisoned before the probe call");
    StreamHold& hold = hold_;
    hold.hold(stream_, 0.5);
    impl_.run(args(), stream_);
    p.call_waited = hold.timed_out();  // the call returned only after the hold gave up
    count_written_enqueue(t_, w_.dtype, n, counter + 1, stream_);
    for (int wait_ms : {0, 2, 20}) {
      if (p.call_waited) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
      const std::int64_t written = count_written_device(t_, w_.dtype, n, counter, count_host_, observer_);
      if (hold.timed_out()) break;  // the stream ran meanwhile: the count proves nothing
      p.written_while_held = written;
      if (written > 0) break;
    }
    hold.release();
    MTABENCH_CUDA_CALL(cudaDeviceSynchronize());
    MTABENCH_CUDA_CALL(cudaMemcpy(count_host_, counter + 1, sizeof(unsigned long long), cudaMemcpyDeviceToHost));
    const auto at_stream_end = static_cast<std::int64_t>(*count_host_);
    const std::int64_t in_the_end = count_written_device(t_, w_.dtype, n, counter + 2, count_host_, stream_);
    p.written_after_stream_end = std::max<std::int64_t>(0, in_the_end - at_stream_end);
    p.escaped = !p.call_waited && (p.written_while_held > 0 || p.written_after_stream_end > 0);
    return p;
  }

 private:
  const Workload& w_;
  Implementation& impl_;
  cudaStream_t stream_, observer_ = nullptr;
  std::uint64_t seed_;
  DeviceTensors t_;
  DeviceBuffer counter_;  // for the probe: nothing is allocated while the stream is held
  unsigned long long* count_host_ = nullptr;  // pinned
  StreamHold hold_;
  DeviceBuffer ref_out_, ref_scratch_;
};

// ---- host tensors ------------------------------------------------------------------------
class HostBackend final : public CaseBackend {
 public:
  HostBackend(const Workload& w, Implementation& impl, std::uint64_t seed)
      : w_(w), impl_(impl), seed_(seed), y_(w.dtype, static_cast<std::size_t>(w.y_elems())) {}
  // New contents in the same buffers, as on the device: the pointers an implementation sees
  // stay the same, so a result cached by pointer comes back stale and is caught.
  void generate(InputSets sets) override {
    HostInputs g = generated(sets);
    if (in_.scores.bytes.empty()) {
      in_ = std::move(g);
      return;
    }
    std::copy(g.scores.bytes.begin(), g.scores.bytes.end(), in_.scores.bytes.begin());
    std::copy(g.weight.bytes.begin(), g.weight.bytes.end(), in_.weight.bytes.begin());
    std::copy(g.bias.bytes.begin(), g.bias.bytes.end(), in_.bias.bytes.begin());
  }
  void poison() override { std::fill(y_.bytes.begin(), y_.bytes.end(), static_cast<unsigned char>(0xff)); }
  void call() override { impl_.run({in_.scores.data(), in_.weight.data(), in_.bias.data(), y_.data()}, nullptr); }
  void sync() override {}
  std::vector<std::string> mutated_inputs(InputSets e) override {
    const HostInputs g = generated(e);
    std::vector<std::string> out;
    if (g.scores.bytes != in_.scores.bytes) out.push_back("scores");
    if (g.weight.bytes != in_.weight.bytes) out.push_back("weight");
    if (g.bias.bytes != in_.bias.bytes) out.push_back("bias");
    return out;
  }
  HostInputs inputs() override { return in_; }
  HostTensor output() override { return y_; }

 private:
  HostInputs generated(InputSets sets) const {
    HostInputs s = generate_inputs_host(w_, seed_, sets.scores);
    if (sets.params != sets.scores) {
      HostInputs p = generate_inputs_host(w_, seed_, sets.params);
      s.weight = std::move(p.weight);
      s.bias = std::move(p.bias);
    }
    return s;
  }
  const Workload& w_;
  Implementation& impl_;
  std::uint64_t seed_;
  HostInputs in_;
  HostTensor y_;
};

}  // namespace

std::unique_ptr<CaseBackend> make_device_backend(const Workload& w, Implementation& impl,
                                                 cudaStream_t stream, std::uint64_t seed) {
  return std::make_unique<DeviceBackend>(w, impl, stream, seed);
}
std::unique_ptr<CaseBackend> make_host_backend(const Workload& w, Implementation& impl,
                                               std::uint64_t seed) {
  return std::make_unique<HostBackend>(w, impl, seed);
}

Gate::Gate(const Workload& w, CaseBackend& backend, GateOptions opt, bool tf32)
    : w_(w), b_(backend), opt_(opt), tol_(tolerance_for(w.dtype, tf32)), rng_(opt.seed * 0x9e3779b97f4a7c15ull + 17) {}

namespace {
// The oracle checks every row (no GPU reference checker) where that is affordable.
bool full_oracle(const Workload& w, const GateOptions& opt) { return oracle_macs(w) <= opt.oracle_full_max_macs; }
}  // namespace

GateMemory gate_memory(const Workload& w, const GateOptions& opt) {
  const double size = static_cast<double>(dtype_size(w.dtype));
  const double inputs = static_cast<double>(w.scores_elems() + w.weight_elems() + w.bias_elems()) * size;
  const double y = static_cast<double>(w.y_elems());
  GateMemory m;
  m.device_bytes = inputs + y * size;
  m.host_bytes = inputs + y * size;
  if (full_oracle(w, opt)) {
    m.host_bytes += 8 * y;  // oracle_full's y
  } else {
    m.device_bytes += 4 * y + static_cast<double>(reference::scratch_bytes(w));
    m.host_bytes += 4 * y;
  }
  return m;
}

InputSets Gate::sample_sets(std::int64_t sample) {
  const auto s = static_cast<std::uint64_t>(1000 + sample);
  return {s, s};
}

std::vector<RowRef> Gate::pick_rows() {
  // The edges (first and last rows, where padding matters) plus rows drawn at random.
  std::set<std::pair<std::int64_t, std::int64_t>> picked;
  const std::int64_t B = w_.batch, S = w_.seq;
  for (std::int64_t i : {std::int64_t{0}, std::int64_t{1}, S - 2, S - 1})
    if (i >= 0 && i < S) picked.insert({0, i}), picked.insert({B - 1, i});
  std::uniform_int_distribution<std::int64_t> db(0, B - 1), di(0, S - 1);
  while (static_cast<int>(picked.size()) < std::min<std::int64_t>(opt_.sampled_rows, B * S))
    picked.insert({db(rng_), di(rng_)});
  std::vector<RowRef> rows;
  for (const auto& [b, i] : picked) rows.push_back({b, i});
  return rows;
}

GateStep Gate::check_now(const std::string& name, InputSets sets) {
  GateStep step;
  step.name = name;
  b_.sync();
  step.mutated = b_.mutated_inputs(sets);
  const HostInputs in = b_.inputs();
  const HostTensor y = b_.output();
  if (full_oracle(w_, opt_)) {
    const auto rows = all_rows(w_);
    step.check = check_rows(w_, y, rows, oracle_rows(w_, in, rows), tol_);
    return step;
  }
  const auto rows = pick_rows();
  const auto ref = oracle_rows(w_, in, rows);
  step.check = check_rows(w_, y, rows, ref, tol_);
  if (const auto r32 = b_.reference_fp32()) {
    // The fast checker is itself checked against the oracle on the same rows first.
    const CheckResult ref_ok = check_rows(w_, *r32, rows, ref, 1e-5);
    if (!ref_ok.passed)
      throw std::runtime_error("harness: the GPU reference disagrees with the fp64 oracle (" + ref_ok.cause +
                               "); no verdict on the implementation is possible");
    step.check = CheckResult::combine(step.check, check_full(w_, y, static_cast<const float*>(r32->data()), tol_));
  }
  return step;
}

std::vector<GateStep> Gate::before_timing(StreamProbe& probe) {
  std::vector<GateStep> steps;
  // An unchecked call first, on other inputs: module loading and other first-call work happen
  // here, not while the probe below holds the stream (lazy loading would wait for the hold).
  b_.generate({999, 999});
  b_.poison();
  b_.call();
  b_.sync();
  const InputSets first{0, 0};
  b_.generate(first);
  b_.poison();
  b_.sync();
  probe = b_.probe_call();
  if (!probe.ran) b_.call();
  steps.push_back(check_now("first call", first));
  if (probe.escaped) {
    steps.back().check.passed = false;
    steps.back().check.cause =
        probe.written_while_held > 0
            ? fmt::format("work ran outside the harness's stream: {} output elements were written while that "
                          "stream was held",
                          probe.written_while_held)
            : fmt::format("work ran outside the harness's stream: {} output elements were written after that "
                          "stream had reached the end of the call (forked and not joined back)",
                          probe.written_after_stream_end);
  }
  if (!steps.back().passed()) return steps;
  // Same scores (same buffers, same contents), new weights and bias.
  const InputSets second{0, 1};
  b_.generate(second);
  b_.poison();
  b_.call();
  steps.push_back(check_now("weights changed, scores unchanged", second));
  return steps;
}

}  // namespace mtabench
