// Device cheats that break the rules of the call itself: work left on another stream, a call
// that never finishes, a fault that kills the CUDA context.
#include "impls/reference/reference_gpu.h"
#include "tests/adversarial/adversarial.h"
#include "tests/adversarial/device_common.cuh"

namespace mtabench::adversarial {

namespace {

constexpr const char* kSource = "tests/adversarial/device_stream.cu";

// adv-other-stream: enqueues the correct work (the GPU reference) on a non-blocking stream of its
// own and returns at once. Events recorded around the call on the harness's stream then time
// nothing, and any check that synchronizes the whole device afterwards sees a correct y.
// Caught by: the gate's stream probe. The first checked call runs while a spinning kernel holds
// the harness's stream; an observer stream sees y being written meanwhile: "work ran outside the
// harness's stream: N output elements were written while that stream was held".
class OtherStream final : public Cheat {
public:
  OtherStream()
      : Cheat("adv-other-stream", "runs the work on its own non-blocking stream and returns at once",
              Location::device, kSource) {}
  ~OtherStream() override {
    if (own_) MTABENCH_CUDA_CALL_NOTHROW(cudaStreamDestroy(own_));
    if (scratch_) MTABENCH_CUDA_CALL_NOTHROW(cudaFree(scratch_));
  }
  void initialize(const Workload& w, const DeviceInfo*, cudaStream_t) override {
    w_ = w;
    MTABENCH_CUDA_CALL(cudaMalloc(&scratch_, reference::scratch_bytes(w)));
    MTABENCH_CUDA_CALL(cudaStreamCreateWithFlags(&own_, cudaStreamNonBlocking));
  }
  void run(const TensorArgs& t, cudaStream_t) override { reference::run_gpu(w_, t, scratch_, false, own_); }

private:
  Workload w_;
  void* scratch_ = nullptr;
  cudaStream_t own_ = nullptr;
};

// adv-fork-nojoin: the fork half of the legal fork/join pattern: an event recorded on the
// harness's stream, its own stream made to wait for it, the correct work enqueued there (so it
// starts only when the harness's stream reaches the call, and never while a probe holds that
// stream), and no join back. Whatever the harness records on its stream after the call (the stop
// event of a timed sample) no longer waits for the work: the sample times nothing.
// Caught by: (needs a gate change, see the report on issue 4) the output is incomplete when the
// harness's stream reaches the end of the call: "work ran outside the harness's stream".
class ForkNoJoin final : public Cheat {
public:
  ForkNoJoin()
      : Cheat("adv-fork-nojoin",
              "forks its work to its own stream behind the harness's stream, never joins back",
              Location::device, kSource) {}
  ~ForkNoJoin() override {
    if (forked_) MTABENCH_CUDA_CALL_NOTHROW(cudaEventDestroy(forked_));
    if (own_) MTABENCH_CUDA_CALL_NOTHROW(cudaStreamDestroy(own_));
    if (scratch_) MTABENCH_CUDA_CALL_NOTHROW(cudaFree(scratch_));
  }
  void initialize(const Workload& w, const DeviceInfo*, cudaStream_t) override {
    w_ = w;
    MTABENCH_CUDA_CALL(cudaMalloc(&scratch_, reference::scratch_bytes(w)));
    MTABENCH_CUDA_CALL(cudaStreamCreateWithFlags(&own_, cudaStreamNonBlocking));
    MTABENCH_CUDA_CALL(cudaEventCreateWithFlags(&forked_, cudaEventDisableTiming));
  }
  void run(const TensorArgs& t, cudaStream_t s) override {
    MTABENCH_CUDA_CALL(cudaEventRecord(forked_, s));
    MTABENCH_CUDA_CALL(cudaStreamWaitEvent(own_, forked_, 0));
    reference::run_gpu(w_, t, scratch_, false, own_);
  }

private:
  Workload w_;
  void* scratch_ = nullptr;
  cudaStream_t own_ = nullptr;
  cudaEvent_t forked_ = nullptr;
};

// Never returns: the flag is cudaMemset to 0 in initialize and nothing ever writes it. The load
// is volatile, so the compiler cannot hoist it out of the loop.
__global__ void spin_kernel(const volatile int* flag) {
  while (*flag == 0)
    __nanosleep(1000);
}

// adv-spin: a kernel that never finishes (a deadlock, an off-by-one in a termination condition).
// The process's next synchronization waits forever.
// Caught by: the suite's per-case time limit (--case-timeout): the child process is killed and
// the parent writes a "timeout" record ("no result: killed after N s"), then goes on.
class Spin final : public Cheat {
public:
  Spin() : Cheat("adv-spin", "launches a kernel that spins forever", Location::device, kSource) {}
  ~Spin() override {
    if (flag_) MTABENCH_CUDA_CALL_NOTHROW(cudaFree(flag_));
  }
  void initialize(const Workload&, const DeviceInfo*, cudaStream_t) override {
    MTABENCH_CUDA_CALL(cudaMalloc(&flag_, sizeof(int)));
    MTABENCH_CUDA_CALL(cudaMemset(flag_, 0, sizeof(int)));
    MTABENCH_CUDA_CALL(cudaDeviceSynchronize());
  }
  void run(const TensorArgs&, cudaStream_t s) override {
    spin_kernel<<<1, 1, 0, s>>>(flag_);
    MTABENCH_CUDA_CHECK_LAUNCH();
  }

private:
  int* flag_ = nullptr;
};

// One store 4 TiB past the start of y: no allocation of this test is anywhere near that large, so
// the address is unmapped and the store faults (cudaErrorIllegalAddress, which is sticky: the
// process's CUDA context is unusable afterwards).
__global__ void oob_kernel(char* y) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    volatile float* far = reinterpret_cast<volatile float*>(y + (std::size_t{1} << 42));
    *far = 1.f;
  }
}

// adv-oob: writes far out of bounds (an indexing bug, or a kernel run on a shape it was never
// built for).
// Caught by: the case's own CUDA error check (the synchronization after the call throws with
// cudaErrorIllegalAddress): outcome "failed" with the error text. The context is lost, so the case
// ran in a child process of its own, and the next case (a fresh process) runs normally.
class Oob final : public Cheat {
public:
  Oob() : Cheat("adv-oob", "writes 4 TiB past the end of y (illegal address)", Location::device, kSource) {}
  void run(const TensorArgs& t, cudaStream_t s) override {
    oob_kernel<<<1, 32, 0, s>>>(static_cast<char*>(t.y));
    MTABENCH_CUDA_CHECK_LAUNCH();
  }
};

} // namespace

std::unique_ptr<Implementation> make_other_stream() {
  return std::make_unique<OtherStream>();
}
std::unique_ptr<Implementation> make_fork_nojoin() {
  return std::make_unique<ForkNoJoin>();
}
std::unique_ptr<Implementation> make_spin() {
  return std::make_unique<Spin>();
}
std::unique_ptr<Implementation> make_oob() {
  return std::make_unique<Oob>();
}

} // namespace mtabench::adversarial
