// mtabench-median-v1: see timing.h for the protocol in words.
#include "harness/cuda_check.h"
#include "harness/timing.h"

#include <fmt/core.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <thread>

namespace mtabench {

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Spins for span_ns and writes the SM clock in MHz it saw (clock64 against %globaltimer). Run
// just before each sample's call; the span is long enough for a coarse %globaltimer.
__global__ void clock_probe_kernel(float* out, unsigned long long span_ns) {
  const unsigned long long t0 = global_ns();
  const long long c0 = clock64();
  unsigned long long t = t0;
  while (t - t0 < span_ns) t = global_ns();
  const long long c1 = clock64();
  out[0] = static_cast<float>(static_cast<double>(c1 - c0) * 1e3 / static_cast<double>(t - t0));
}

// Holds the stream until the host sets *flag, or gives up after timeout_ns and says so.
__global__ void hold_kernel(const volatile int* flag, int* timed_out, unsigned long long timeout_ns) {
  const unsigned long long t0 = global_ns();
  while (*flag == 0) {
    if (global_ns() - t0 > timeout_ns) {
      *timed_out = 1;
      return;
    }
  }
}

// Reads the flush buffer so the L2 ends holding clean lines (a write alone leaves dirty lines
// whose write-back the next kernel would pay for).
__global__ void read_flush_kernel(const uint4* p, std::size_t n, unsigned long long* sink) {
  unsigned acc = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const uint4 v = p[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9e3779b9u) *sink = acc;  // practically never; keeps the loads alive
}

bool stderr_is_tty() {
  static const bool tty = isatty(2) != 0;
  return tty;
}

}  // namespace

void progress_line(const std::string& text) {
  if (!stderr_is_tty()) return;
  std::fprintf(stderr, "\r\033[K%s", text.c_str());
  std::fflush(stderr);
}
void progress_done() {
  if (!stderr_is_tty()) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
}

StreamHold::StreamHold() {
  void* p = nullptr;
  MTABENCH_CUDA_CALL(cudaHostAlloc(&p, 2 * sizeof(int), cudaHostAllocMapped));
  host_flag_ = static_cast<volatile int*>(p);
  host_timed_out_ = host_flag_ + 1;
  host_flag_[0] = host_flag_[1] = 0;
  MTABENCH_CUDA_CALL(cudaHostGetDevicePointer(reinterpret_cast<void**>(&dev_flag_), p, 0));
  dev_timed_out_ = dev_flag_ + 1;
}
StreamHold::~StreamHold() { MTABENCH_CUDA_CALL_NOTHROW(cudaFreeHost(const_cast<int*>(host_flag_))); }

void StreamHold::hold(cudaStream_t stream, double timeout_s) {
  *host_flag_ = 0;
  *host_timed_out_ = 0;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  hold_kernel<<<1, 1, 0, stream>>>(dev_flag_, dev_timed_out_, static_cast<unsigned long long>(timeout_s * 1e9));
  MTABENCH_CUDA_CHECK_LAUNCH();
}
void StreamHold::release() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  *host_flag_ = 1;
}
bool StreamHold::timed_out() const { return *host_timed_out_ != 0; }

DeviceTimer::DeviceTimer(std::int64_t l2_bytes, int default_clock_mhz)
    : default_clock_mhz_(default_clock_mhz) {
  // At least twice the L2, rounded to 1 MiB; 64 MiB if the device reports no L2 size.
  const std::int64_t mib = 1 << 20;
  flush_bytes_ = std::max<std::int64_t>(2 * l2_bytes, 64 * mib);
  flush_bytes_ = (flush_bytes_ + mib - 1) / mib * mib;
  MTABENCH_CUDA_CALL(cudaMalloc(&flush_buf_, static_cast<std::size_t>(flush_bytes_)));
  MTABENCH_CUDA_CALL(cudaMalloc(&flush_sink_, sizeof(unsigned long long)));
  MTABENCH_CUDA_CALL(cudaHostAlloc(reinterpret_cast<void**>(&host_clock_), sizeof(float), cudaHostAllocMapped));
  MTABENCH_CUDA_CALL(cudaHostGetDevicePointer(reinterpret_cast<void**>(&dev_clock_), host_clock_, 0));
  MTABENCH_CUDA_CALL(cudaEventCreate(&start_));
  MTABENCH_CUDA_CALL(cudaEventCreate(&stop_));
  // No persisting L2 lines: an implementation must not keep its data resident between calls.
  const cudaError_t e = cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0);
  if (e != cudaSuccess && e != cudaErrorUnsupportedLimit) MTABENCH_CUDA_CALL(e);
  (void)cudaGetLastError();
}

DeviceTimer::~DeviceTimer() {
  MTABENCH_CUDA_CALL_NOTHROW(cudaFree(flush_buf_));
  MTABENCH_CUDA_CALL_NOTHROW(cudaFree(flush_sink_));
  MTABENCH_CUDA_CALL_NOTHROW(cudaFreeHost(host_clock_));
  MTABENCH_CUDA_CALL_NOTHROW(cudaEventDestroy(start_));
  MTABENCH_CUDA_CALL_NOTHROW(cudaEventDestroy(stop_));
}

void DeviceTimer::flush_l2(cudaStream_t stream) {
  const cudaError_t e = cudaCtxResetPersistingL2Cache();
  if (e != cudaSuccess && e != cudaErrorNotSupported) MTABENCH_CUDA_CALL(e);
  (void)cudaGetLastError();
  MTABENCH_CUDA_CALL(cudaMemsetAsync(flush_buf_, static_cast<int>(++flush_round_ & 0xff),
                                     static_cast<std::size_t>(flush_bytes_), stream));
  const std::size_t n = static_cast<std::size_t>(flush_bytes_) / sizeof(uint4);
  read_flush_kernel<<<1024, 256, 0, stream>>>(static_cast<const uint4*>(flush_buf_), n, flush_sink_);
  MTABENCH_CUDA_CHECK_LAUNCH();
}

DeviceTimer::Sample DeviceTimer::one_sample(const TimedCall& tc, cudaStream_t stream,
                                            std::int64_t index, cudaGraphExec_t graph,
                                            double block_timeout_s) {
  tc.prepare(index);
  flush_l2(stream);
  host_clock_[0] = 0.f;
  clock_probe_kernel<<<1, 1, 0, stream>>>(dev_clock_, 20'000ull);
  MTABENCH_CUDA_CHECK_LAUNCH();
  // Everything before the call has finished: the host-inclusive time below is the call's alone.
  MTABENCH_CUDA_CALL(cudaStreamSynchronize(stream));
  hold_.hold(stream, block_timeout_s);
  MTABENCH_CUDA_CALL(cudaEventRecord(start_, stream));
  const auto t0 = Clock::now();
  if (graph) MTABENCH_CUDA_CALL(cudaGraphLaunch(graph, stream));
  else tc.call();
  MTABENCH_CUDA_CALL(cudaEventRecord(stop_, stream));
  hold_.release();  // start, call, stop now run back to back
  MTABENCH_CUDA_CALL(cudaDeviceSynchronize());  // all streams: work the call left elsewhere too
  const double host_s = seconds_since(t0);
  MTABENCH_CUDA_CALL(cudaGetLastError());
  float ms = 0;
  MTABENCH_CUDA_CALL(cudaEventElapsedTime(&ms, start_, stop_));
  return {ms * 1e-3, host_s, static_cast<double>(host_clock_[0]), hold_.timed_out()};
}

TimingResult DeviceTimer::measure(const TimedCall& tc, cudaStream_t stream, const TimingOptions& opt) {
  TimingResult r;
  r.mode = opt.graph ? "cuda-graph" : "device-events";
  r.clock_default_mhz = default_clock_mhz_;
  r.l2_flush_bytes = static_cast<double>(flush_bytes_);
  const auto t_begin = Clock::now();

  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  if (opt.graph) {
    tc.prepare(0);
    MTABENCH_CUDA_CALL(cudaStreamSynchronize(stream));
    MTABENCH_CUDA_CALL(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    tc.call();
    MTABENCH_CUDA_CALL(cudaStreamEndCapture(stream, &graph));
    MTABENCH_CUDA_CALL(cudaGraphInstantiate(&exec, graph, 0));
  }
  struct GraphGuard {
    cudaGraph_t g;
    cudaGraphExec_t e;
    ~GraphGuard() {
      if (e) MTABENCH_CUDA_CALL_NOTHROW(cudaGraphExecDestroy(e));
      if (g) MTABENCH_CUDA_CALL_NOTHROW(cudaGraphDestroy(g));
    }
  } guard{graph, exec};

  // Warm-up: at least min_warmup_calls and min_warmup_s, full samples, discarded.
  std::int64_t index = 0;
  const auto t_warm = Clock::now();
  while (r.warmup_calls < opt.min_warmup_calls || seconds_since(t_warm) < opt.min_warmup_s) {
    one_sample(tc, stream, index++, exec, opt.block_timeout_s);
    ++r.warmup_calls;
  }
  r.warmup_s = seconds_since(t_warm);

  StopChecker checker(opt.stop);
  std::vector<double> dev, host, clocks;
  double paused_s = 0;  // time spent in inspect(), not counted as measuring
  const auto t_meas = Clock::now();
  std::int64_t accepted = 0;
  bool inspected = false;
  for (;;) {
    const std::int64_t this_index = index++;
    const Sample s = one_sample(tc, stream, this_index, exec, opt.block_timeout_s);
    if (s.hold_timed_out) ++r.held_call_syncs;
    if (throttled(s.clock_mhz, default_clock_mhz_, opt.throttle_fraction)) {
      ++r.discarded_throttled;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));  // short back-off
    } else {
      dev.push_back(s.device_s);
      host.push_back(s.host_s);
      clocks.push_back(s.clock_mhz);
      if (!inspected && accepted == tc.inspect_at && tc.inspect) {
        const auto ti = Clock::now();
        tc.inspect(this_index);
        r.inspected_sample = accepted;
        inspected = true;
        paused_s += seconds_since(ti);
      }
      ++accepted;
    }
    const double elapsed = seconds_since(t_meas) - paused_s;
    if (opt.progress_label.size() && stderr_is_tty() && (accepted % 16 == 0) && !dev.empty()) {
      std::vector<double> tmp = dev;
      std::nth_element(tmp.begin(), tmp.begin() + tmp.size() / 2, tmp.end());
      progress_line(fmt::format("{}  n={}  median {:.2f} us  {:.1f}s", opt.progress_label,
                                dev.size(), tmp[tmp.size() / 2] * 1e6, elapsed));
    }
    const StopReason why = checker.after_sample(dev, elapsed);
    if (why != StopReason::keep_going) {
      r.stop = why;
      break;
    }
    // Throttled samples do not count, but the time limit still does.
    if (dev.empty() && elapsed >= opt.stop.max_time_s) {
      r.stop = StopReason::time_limit;
      break;
    }
  }
  if (!inspected && tc.inspect && accepted > 0) {  // the run ended before the chosen sample
    tc.inspect(index - 1);
    r.inspected_sample = accepted - 1;
  }
  progress_done();

  r.device = summarize(dev);
  r.host = summarize(host);
  if (!clocks.empty()) {
    double sum = 0, mn = clocks[0];
    for (double c : clocks) sum += c, mn = std::min(mn, c);
    r.clock_mean_mhz = sum / static_cast<double>(clocks.size());
    r.clock_min_mhz = mn;
  }
  if (opt.keep_samples) {
    r.samples = dev;
    r.host_samples = host;
    r.clocks_mhz = clocks;
  }
  if (r.held_call_syncs > 0)
    r.warnings.push_back(fmt::format(
        "{} calls waited for the device while the harness held it: the call synchronizes", r.held_call_syncs));
  if (r.discarded_throttled > 0)
    r.warnings.push_back(fmt::format("{} samples discarded: SM clock under {:.0f}% of {} MHz",
                                     r.discarded_throttled, opt.throttle_fraction * 100, default_clock_mhz_));
  // Host-inclusive time includes everything the call started, on any stream; device time only
  // what ran on the harness's stream. A large gap means work escaped the timed stream.
  if (r.device.n > 0 && r.host.median - r.device.median > std::max(50e-6, 2.0 * r.device.median))
    r.warnings.push_back(fmt::format(
        "device time {:.2f} us is far below the host-inclusive {:.2f} us: work may run outside the "
        "timed stream",
        r.device.median * 1e6, r.host.median * 1e6));
  if (r.stop == StopReason::time_limit)
    r.warnings.push_back(fmt::format("stopped at the time limit ({} s) with the median's 95% CI at "
                                     "+/-{:.2f}%",
                                     opt.stop.max_time_s, r.device.ci_rel_halfwidth * 100));
  r.seconds = seconds_since(t_begin);
  return r;
}

TimingResult measure_host(const TimedCall& tc, const TimingOptions& opt) {
  TimingResult r;
  r.mode = "host-wall";
  const auto t_begin = Clock::now();
  std::int64_t index = 0;
  const auto t_warm = Clock::now();
  while (r.warmup_calls < opt.min_warmup_calls || seconds_since(t_warm) < opt.min_warmup_s) {
    tc.prepare(index++);
    tc.call();
    ++r.warmup_calls;
  }
  r.warmup_s = seconds_since(t_warm);
  StopChecker checker(opt.stop);
  std::vector<double> samples;
  double paused_s = 0;
  const auto t_meas = Clock::now();
  bool inspected = false;
  for (;;) {
    const auto tp = Clock::now();
    tc.prepare(index);
    paused_s += seconds_since(tp);  // regenerating inputs on the CPU is not measuring
    const auto t0 = Clock::now();
    tc.call();
    samples.push_back(seconds_since(t0));
    if (!inspected && tc.inspect && static_cast<std::int64_t>(samples.size()) - 1 == tc.inspect_at) {
      const auto ti = Clock::now();
      tc.inspect(index);
      inspected = true;
      r.inspected_sample = tc.inspect_at;
      paused_s += seconds_since(ti);
    }
    ++index;
    const StopReason why = checker.after_sample(samples, seconds_since(t_meas) - paused_s);
    if (why != StopReason::keep_going) {
      r.stop = why;
      break;
    }
  }
  if (!inspected && tc.inspect) {
    tc.inspect(index - 1);
    r.inspected_sample = static_cast<std::int64_t>(samples.size()) - 1;
  }
  r.device = summarize(samples);  // for a host implementation its wall time is its time
  r.host = r.device;
  if (opt.keep_samples) r.samples = r.host_samples = samples;
  if (r.stop == StopReason::time_limit)
    r.warnings.push_back(fmt::format("stopped at the time limit ({} s) with the median's 95% CI at +/-{:.2f}%",
                                     opt.stop.max_time_s, r.device.ci_rel_halfwidth * 100));
  r.seconds = seconds_since(t_begin);
  return r;
}

nlohmann::json TimingResult::to_json() const {
  auto stats = [](const Summary& s) {
    return nlohmann::json{{"n", s.n},         {"median_s", s.median}, {"p20_s", s.p20},
                          {"p80_s", s.p80},   {"min_s", s.min},       {"max_s", s.max},
                          {"mean_s", s.mean}, {"stdev_s", s.stdev},   {"cv", s.cv},
                          {"median_ci95_low_s", s.ci_low}, {"median_ci95_high_s", s.ci_high},
                          {"median_ci95_rel_halfwidth", std::isfinite(s.ci_rel_halfwidth) ? s.ci_rel_halfwidth : -1.0}};
  };
  nlohmann::json j{{"protocol", protocol},
                   {"mode", mode},
                   {"device", stats(device)},
                   {"host_inclusive", stats(host)},
                   {"warmup_calls", warmup_calls},
                   {"warmup_s", warmup_s},
                   {"discarded_throttled", discarded_throttled},
                   {"held_call_syncs", held_call_syncs},
                   {"stop_reason", stop_reason_name(stop)},
                   {"clock_mean_mhz", clock_mean_mhz},
                   {"clock_min_mhz", clock_min_mhz},
                   {"clock_default_mhz", clock_default_mhz},
                   {"l2_flush_bytes", l2_flush_bytes},
                   {"seconds", seconds},
                   {"inspected_sample", inspected_sample},
                   {"warnings", warnings}};
  if (!samples.empty()) {
    j["samples_s"] = samples;
    j["host_samples_s"] = host_samples;
    if (!clocks_mhz.empty()) j["clocks_mhz"] = clocks_mhz;
  }
  return j;
}

}  // namespace mtabench
