// Device cheats about what gets written: nothing, the inputs, or the masked region.
#include "impls/reference/reference_gpu.h"
#include "tests/adversarial/adversarial.h"
#include "tests/adversarial/device_common.cuh"

namespace mtabench::adversarial {

namespace {

constexpr const char* kSource = "tests/adversarial/device_output.cu";

// adv-nowrite: returns at once, writes nothing; whatever y held before stays there (a harness
// that reuses a correct earlier output would be fooled).
// Caught by: the poisoned output (0xFF bytes before every call): "output left unwritten".
class NoWrite final : public Cheat {
public:
  NoWrite() : Cheat("adv-nowrite", "returns without writing the output", Location::device, kSource) {}
  void run(const TensorArgs&, cudaStream_t) override {}
};

// adv-zero-inputs: zeroes scores, weight and bias through their const pointers and writes y = 0.
// With every input zero the true answer is zero too (bias 0, weights 0), so a gate that judged the
// output against the inputs as it finds them after the call would see an exact match.
// Caught by: the mutation check (inputs fingerprinted against what was generated): "inputs
// modified by the implementation: scores, weight, bias".
class ZeroInputs final : public Cheat {
public:
  ZeroInputs()
      : Cheat("adv-zero-inputs", "zeroes its (const) inputs and writes zeros", Location::device, kSource) {}
  void initialize(const Workload& w, const DeviceInfo*, cudaStream_t) override { w_ = w; }
  void run(const TensorArgs& t, cudaStream_t s) override {
    const std::size_t e = dtype_size(w_.dtype);
    MTABENCH_CUDA_CALL(
        cudaMemsetAsync(const_cast<void*>(t.scores), 0, static_cast<std::size_t>(w_.scores_elems()) * e, s));
    MTABENCH_CUDA_CALL(
        cudaMemsetAsync(const_cast<void*>(t.weight), 0, static_cast<std::size_t>(w_.weight_elems()) * e, s));
    MTABENCH_CUDA_CALL(
        cudaMemsetAsync(const_cast<void*>(t.bias), 0, static_cast<std::size_t>(w_.bias_elems()) * e, s));
    MTABENCH_CUDA_CALL(cudaMemsetAsync(t.y, 0, dev::y_bytes(w_), s));
  }

private:
  Workload w_;
};

template <class T> __global__ void upper_garbage_kernel(T* y, dev::Shape d) {
  ADV_GRID_STRIDE(x, d.y_elems()) {
    const std::int64_t j = x % d.S, i = (x / d.S) % d.S;
    if (j > i) y[x] = dev::from_f<T>(0.25f + static_cast<float>((j - i) % 7)); // finite, never 0
  }
}

// adv-upper-garbage: the correct result on and below the diagonal (the GPU reference), then finite
// nonzero values above it, as a kernel that skips the final causal re-mask would leave.
// Caught by: the masked-region check: "masked region (j > i) not exactly zero".
class UpperGarbage final : public Cheat {
public:
  UpperGarbage()
      : Cheat("adv-upper-garbage", "correct below the diagonal, finite garbage above it", Location::device,
              kSource) {}
  ~UpperGarbage() override {
    if (scratch_) MTABENCH_CUDA_CALL_NOTHROW(cudaFree(scratch_));
  }
  void initialize(const Workload& w, const DeviceInfo*, cudaStream_t) override {
    w_ = w;
    MTABENCH_CUDA_CALL(cudaMalloc(&scratch_, reference::scratch_bytes(w)));
  }
  void run(const TensorArgs& t, cudaStream_t s) override {
    reference::run_gpu(w_, t, scratch_, /*out_fp32=*/false, s);
    const dev::Shape d = dev::Shape::of(w_);
    dev::dispatch(w_.dtype, [&](auto tag) {
      using T = decltype(tag);
      upper_garbage_kernel<T><<<dev::blocks_for(d.y_elems()), 256, 0, s>>>(static_cast<T*>(t.y), d);
    });
    MTABENCH_CUDA_CHECK_LAUNCH();
  }

private:
  Workload w_;
  void* scratch_ = nullptr;
};

} // namespace

std::unique_ptr<Implementation> make_nowrite() {
  return std::make_unique<NoWrite>();
}
std::unique_ptr<Implementation> make_zero_inputs() {
  return std::make_unique<ZeroInputs>();
}
std::unique_ptr<Implementation> make_upper_garbage() {
  return std::make_unique<UpperGarbage>();
}

} // namespace mtabench::adversarial
