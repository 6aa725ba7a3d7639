// Device cheats that compute something, just not the operation asked for: too little precision,
// or only the one shape that the leaderboard shows.
#include "tests/adversarial/adversarial.h"
#include "tests/adversarial/device_common.cuh"

namespace mtabench::adversarial {

namespace {

constexpr const char* kSource = "tests/adversarial/device_math.cu";

// Everything in __half: inputs rounded to fp16, max, exp, the softmax sum, the division and the
// convolution's fused multiply-adds, all with fp16 results; only the final store widens to fp32.
__global__ void fp16_accum_kernel(const float* scores, const float* weight, const float* bias, float* y,
                                  dev::Shape d) {
  ADV_GRID_STRIDE(x, d.y_elems()) {
    const std::int64_t j = x % d.S, i = (x / d.S) % d.S, o = (x / (d.S * d.S)) % d.O,
                       b = x / (d.S * d.S * d.O);
    if (j > i) {
      y[x] = 0.f;
      continue;
    }
    __half z = __float2half_rn(bias[o]);
    for (std::int64_t c = 0; c < d.C; ++c) {
      for (int u = 0; u < d.K; ++u) {
        const std::int64_t ii = i + u - d.r;
        if (ii < 0 || ii >= d.S) continue;
        const float* row = scores + ((b * d.C + c) * d.S + ii) * d.S;
        __half m = __float2half_rn(row[0]);
        for (std::int64_t jj = 1; jj <= ii; ++jj)
          m = __hmax(m, __float2half_rn(row[jj]));
        __half l = __float2half_rn(0.f);
        for (std::int64_t jj = 0; jj <= ii; ++jj)
          l = __hadd(l, hexp(__hsub(__float2half_rn(row[jj]), m)));
        for (int v = 0; v < d.K; ++v) {
          const std::int64_t jj = j + v - d.r;
          if (jj < 0 || jj > ii) continue;
          const __half p = __hdiv(hexp(__hsub(__float2half_rn(row[jj]), m)), l);
          z = __hfma(__float2half_rn(weight[((o * d.C + c) * d.K + u) * d.K + v]), p, z);
        }
      }
    }
    y[x] = __half2float(z);
  }
}

// adv-fp16-accum: on an fp32 workload, computes in fp16 end to end (fp16 accumulation: about
// 3 decimal digits) and does not declare it. Twice as fast a memory path, four times the math.
// Caught by: the fp32 tolerance (relative L2 1e-5, SPEC §1): "relative L2 error ... over the
// tolerance 1e-05". It declares fp32 workloads only; elsewhere it is "unsupported".
class Fp16Accum final : public Cheat {
public:
  Fp16Accum()
      : Cheat("adv-fp16-accum", "computes fp32 workloads in fp16 with fp16 accumulation", Location::device,
              kSource) {}
  Support check_support(const Workload& w, const DeviceInfo* dev) const override {
    if (w.dtype != DType::fp32)
      return Support::no("fp32 workloads only (the trick is fp16 math on fp32 data)");
    return Cheat::check_support(w, dev);
  }
  void initialize(const Workload& w, const DeviceInfo*, cudaStream_t) override { w_ = w; }
  void run(const TensorArgs& t, cudaStream_t s) override {
    const dev::Shape d = dev::Shape::of(w_);
    fp16_accum_kernel<<<dev::blocks_for(d.y_elems()), 256, 0, s>>>(
        static_cast<const float*>(t.scores), static_cast<const float*>(t.weight),
        static_cast<const float*>(t.bias), static_cast<float*>(t.y), d);
    MTABENCH_CUDA_CHECK_LAUNCH();
  }

private:
  Workload w_;
};

// The seed shape as compile-time constants (k 3, seq 32, batch 2, heads 4/4) and bf16 elements,
// whatever the workload is. Every bf16-sized slot of the real y is written (so nothing is left
// unwritten), each decomposed with the seed's strides; loads wrap around the real buffers, so the
// kernel computes garbage on other shapes and dtypes instead of faulting.
__global__ void seed_only_kernel(const __nv_bfloat16* scores, const __nv_bfloat16* weight,
                                 const __nv_bfloat16* bias, __nv_bfloat16* y, std::int64_t n_scores,
                                 std::int64_t n_weight, std::int64_t n_bias, std::int64_t n_y) {
  namespace s = seed_shape;
  ADV_GRID_STRIDE(x, n_y) {
    const std::int64_t j = x % s::S, i = (x / s::S) % s::S, o = (x / (s::S * s::S)) % s::O,
                       b = (x / (s::S * s::S * s::O)) % s::B;
    if (j > i) {
      y[x] = __float2bfloat16_rn(0.f);
      continue;
    }
    float z = __bfloat162float(bias[o % n_bias]);
#pragma unroll
    for (int c = 0; c < s::C; ++c) {
#pragma unroll
      for (int u = 0; u < s::K; ++u) {
        const std::int64_t ii = i + u - s::R;
        if (ii < 0 || ii >= s::S) continue;
        const std::int64_t row = ((b * s::C + c) * s::S + ii) * s::S;
        float m = -INFINITY;
        for (std::int64_t jj = 0; jj <= ii; ++jj)
          m = fmaxf(m, __bfloat162float(scores[(row + jj) % n_scores]));
        float l = 0.f;
        for (std::int64_t jj = 0; jj <= ii; ++jj)
          l += expf(__bfloat162float(scores[(row + jj) % n_scores]) - m);
#pragma unroll
        for (int v = 0; v < s::K; ++v) {
          const std::int64_t jj = j + v - s::R;
          if (jj < 0 || jj > ii) continue;
          const float p = expf(__bfloat162float(scores[(row + jj) % n_scores]) - m) / l;
          z = fmaf(__bfloat162float(weight[(((o * s::C + c) * s::K + u) * s::K + v) % n_weight]), p, z);
        }
      }
    }
    y[x] = __float2bfloat16_rn(z);
  }
}

// adv-seed-only: tuned for the one workload the leaderboard shows: shape and dtype hard-coded,
// no checks. Right on the seed workload, garbage on every other (and it claims to support all).
// Caught by: the gate on any other shape (relative error, masked region or NaN, whichever the
// garbage trips first). Passing on the seed shape itself is correct behaviour.
class SeedOnly final : public Cheat {
public:
  SeedOnly()
      : Cheat("adv-seed-only", "hard-codes the seed shape (k3 seq32 b2 h4/4 bf16), garbage elsewhere",
              Location::device, kSource) {}
  void initialize(const Workload& w, const DeviceInfo*, cudaStream_t) override { w_ = w; }
  void run(const TensorArgs& t, cudaStream_t s) override {
    // Element counts in bf16 units of each buffer's bytes, so loads and stores stay inside them.
    const auto units = [&](std::int64_t elems) {
      return elems * static_cast<std::int64_t>(dtype_size(w_.dtype)) / 2;
    };
    const std::int64_t n_y = units(w_.y_elems());
    seed_only_kernel<<<dev::blocks_for(n_y), 256, 0, s>>>(
        static_cast<const __nv_bfloat16*>(t.scores), static_cast<const __nv_bfloat16*>(t.weight),
        static_cast<const __nv_bfloat16*>(t.bias), static_cast<__nv_bfloat16*>(t.y), units(w_.scores_elems()),
        units(w_.weight_elems()), units(w_.bias_elems()), n_y);
    MTABENCH_CUDA_CHECK_LAUNCH();
  }

private:
  Workload w_;
};

} // namespace

std::unique_ptr<Implementation> make_fp16_accum() {
  return std::make_unique<Fp16Accum>();
}
std::unique_ptr<Implementation> make_seed_only() {
  return std::make_unique<SeedOnly>();
}

} // namespace mtabench::adversarial
