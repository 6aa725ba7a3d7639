#pragma once
// mtabench-median-v1 (SPEC §3): the one timing loop of the harness. Nothing else times anything.
//
// Per sample, outside the timed region: the caller's prepare() (fresh inputs, poisoned output),
// then an L2 flush (write a buffer of 2x the L2 size, then read it back so the L2 holds clean,
// unrelated lines) and a persisting-L2 reset. Then a blocking kernel holds the stream while the
// host enqueues: start event, exactly one call, stop event; releasing the hold makes the device
// run the three back to back, so the CUDA-event time is the call's device time without the
// host's launch gaps. The blocking kernel also measures the SM clock (clock64 against
// %globaltimer) just before the call. The host-inclusive time of the same call runs from
// entering the call to the end of all device work (cudaDeviceSynchronize), so it includes the
// launch cost and any work on other streams.
#include "harness/stats.h"

#include <cuda_runtime_api.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace mtabench {

inline constexpr const char* kProtocol = "mtabench-median-v1";

struct TimingOptions {
  StopRule stop;
  std::int64_t min_warmup_calls = 3;
  double min_warmup_s = 0.025;
  bool graph = false;          // capture one call in a CUDA graph and time graph launches
  bool keep_samples = false;   // raw samples in the result (--samples)
  double throttle_fraction = 0.75;
  double block_timeout_s = 1.0;  // the hold gives up after this (a call that synchronizes)
  std::string progress_label;    // shown on the progress line (stderr, TTY only)
};

// What the protocol times. The runner supplies these; the protocol decides when they run.
struct TimedCall {
  std::function<void(std::int64_t sample)> prepare;  // fresh inputs and poisoned output, enqueued
  std::function<void()> call;                         // exactly one call of the implementation
  // Called once, untimed, right after sample `inspect_at` completes (or after the last sample
  // if the run ends sooner), while the buffers still hold that sample's inputs and output: the
  // correctness gate's check of a timed output.
  std::function<void(std::int64_t sample)> inspect;
  std::int64_t inspect_at = 0;
};

struct TimingResult {
  std::string protocol = kProtocol;
  std::string mode;  // "device-events" | "cuda-graph" | "host-wall"
  Summary device;    // seconds; the headline is device.median
  Summary host;      // host-inclusive seconds of the same calls
  std::int64_t warmup_calls = 0;
  double warmup_s = 0;
  std::int64_t discarded_throttled = 0;
  std::int64_t held_call_syncs = 0;  // samples where the hold timed out: the call waited on the device
  StopReason stop = StopReason::keep_going;
  double clock_mean_mhz = 0, clock_min_mhz = 0, clock_default_mhz = 0;
  double seconds = 0;  // wall time of the whole measurement, warm-up included
  double l2_flush_bytes = 0;
  std::vector<double> samples, host_samples, clocks_mhz;  // kept with keep_samples
  std::int64_t inspected_sample = -1;
  std::vector<std::string> warnings;

  nlohmann::json to_json() const;
};

// Holds a stream with a spinning one-thread kernel until release() (or a timeout), so that work
// enqueued behind it waits. The timing loop uses it to make start event, call and stop event
// run back to back; the correctness gate uses it to see whether a call's work escapes the
// stream it was given.
class StreamHold {
 public:
  StreamHold();
  ~StreamHold();
  StreamHold(const StreamHold&) = delete;
  StreamHold& operator=(const StreamHold&) = delete;
  void hold(cudaStream_t stream, double timeout_s);  // enqueue the spinning kernel
  void release();                                    // let it finish
  bool timed_out() const;                            // valid after the stream passed the hold

 private:
  volatile int* host_flag_ = nullptr;  // pinned, mapped
  int* dev_flag_ = nullptr;
  volatile int* host_timed_out_ = nullptr;
  int* dev_timed_out_ = nullptr;
};

// Device-side state reused across cases: the flush buffer (allocated once, 2x L2) and the
// pinned flag of the blocking kernel.
class DeviceTimer {
 public:
  DeviceTimer(std::int64_t l2_bytes, int default_clock_mhz);
  ~DeviceTimer();
  DeviceTimer(const DeviceTimer&) = delete;
  DeviceTimer& operator=(const DeviceTimer&) = delete;

  TimingResult measure(const TimedCall& tc, cudaStream_t stream, const TimingOptions& opt);
  // The L2 flush alone (also used by the test that shows it evicts).
  void flush_l2(cudaStream_t stream);
  std::int64_t flush_bytes() const { return flush_bytes_; }

 private:
  struct Sample {
    double device_s, host_s, clock_mhz;
    bool hold_timed_out;
  };
  Sample one_sample(const TimedCall& tc, cudaStream_t stream, std::int64_t index,
                    cudaGraphExec_t graph, double block_timeout_s);

  std::int64_t flush_bytes_ = 0;
  void* flush_buf_ = nullptr;
  unsigned long long* flush_sink_ = nullptr;
  StreamHold hold_;
  float* host_clock_ = nullptr;  // pinned, mapped: the SM clock the probe kernel measured
  float* dev_clock_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  int default_clock_mhz_ = 0;
  unsigned flush_round_ = 0;
};

// Host implementations: wall time of each call (no flush, no events); same stop rule.
TimingResult measure_host(const TimedCall& tc, const TimingOptions& opt);

// One updating line on stderr when it is a terminal; nothing otherwise.
void progress_line(const std::string& text);
void progress_done();

}  // namespace mtabench
