// The CPU implementation: SPEC §1 in plain fp32 C++ loops, multithreaded over output rows. It is
// what `run` falls back to on a machine without a GPU, and a second, independent code path from
// the fp64 oracle that judges it.
#include "harness/tensors.h"
#include "impls/reference/reference_gpu.h"

#include <cmath>
#include <vector>

namespace mtabench::reference {

namespace {

class ReferenceCpu final : public Implementation {
 public:
  ImplInfo info() const override {
    ImplInfo i;
    i.name = "reference-cpu";
    i.version = "1";
    i.language = "c++";
    i.license = "Apache-2.0";
    i.source = "impls/reference/reference_cpu.cpp";
    i.description = "plain fp32 C++ loops on the CPU, multithreaded over rows";
    i.location = Location::host;
    return i;
  }
  Support check_support(const Workload& w, const DeviceInfo*) const override {
    // About 2 ns per multiply-add per core: keep a call under a few seconds.
    const double macs = static_cast<double>(w.batch) * w.heads_out * w.heads_in * w.k * w.k *
                        (static_cast<double>(w.seq) * (w.seq + 1) / 2);
    if (macs > 2e9) return Support::no("too large for the CPU implementation (over 2e9 multiply-adds)");
    return Support::yes();
  }
  void initialize(const Workload& w, const DeviceInfo*, cudaStream_t) override { w_ = w; }
  void run(const TensorArgs& t, cudaStream_t) override {
    const Workload& w = w_;
    const std::int64_t S = w.seq, C = w.heads_in, O = w.heads_out, K = w.k, r = w.r();
    const DType dt = w.dtype;
    // Probabilities for every (b, c, i) row, fp32, exactly 0 above the diagonal.
    std::vector<float> p(static_cast<std::size_t>(w.batch * C * S * S));
    parallel_for(w.batch * C * S, [&](std::int64_t b0, std::int64_t e0) {
      for (std::int64_t row = b0; row < e0; ++row) {
        const std::int64_t i = row % S;
        float m = -INFINITY;
        for (std::int64_t j = 0; j <= i; ++j) m = std::max(m, load_as_float(t.scores, dt, static_cast<std::size_t>(row * S + j)));
        float l = 0;
        float* pr = &p[static_cast<std::size_t>(row * S)];
        for (std::int64_t j = 0; j <= i; ++j) l += pr[j] = std::exp(load_as_float(t.scores, dt, static_cast<std::size_t>(row * S + j)) - m);
        for (std::int64_t j = 0; j < S; ++j) pr[j] = j <= i ? pr[j] / l : 0.f;
      }
    });
    std::vector<float> wt(static_cast<std::size_t>(O * C * K * K));
    for (std::size_t n = 0; n < wt.size(); ++n) wt[n] = load_as_float(t.weight, dt, n);
    parallel_for(w.batch * O * S, [&](std::int64_t b0, std::int64_t e0) {
      for (std::int64_t yrow = b0; yrow < e0; ++yrow) {
        const std::int64_t i = yrow % S, o = (yrow / S) % O, b = yrow / (S * O);
        const float bias = load_as_float(t.bias, dt, static_cast<std::size_t>(o));
        for (std::int64_t j = 0; j < S; ++j) {
          float z = 0.f;
          if (j <= i) {
            z = bias;
            for (std::int64_t c = 0; c < C; ++c)
              for (std::int64_t u = 0; u < K; ++u) {
                const std::int64_t ii = i + u - r;
                if (ii < 0 || ii >= S) continue;
                const float* pr = &p[static_cast<std::size_t>(((b * C + c) * S + ii) * S)];
                for (std::int64_t v = 0; v < K; ++v) {
                  const std::int64_t jj = j + v - r;
                  if (jj >= 0 && jj < S) z += wt[static_cast<std::size_t>(((o * C + c) * K + u) * K + v)] * pr[jj];
                }
              }
          }
          store_from_float(t.y, dt, static_cast<std::size_t>(yrow * S + j), z);
        }
      }
    });
  }

 private:
  Workload w_;
};

}  // namespace

std::unique_ptr<Implementation> make_cpu() { return std::make_unique<ReferenceCpu>(); }

}  // namespace mtabench::reference
