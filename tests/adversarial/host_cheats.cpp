// Host analogues of the device cheats (location host, language c++): the same tricks on CPU
// memory, so that the gate's checks, the child processes and the time limit are exercised by CI
// on machines without a GPU. The correct work, where a cheat needs it, is delegated to the
// shipped CPU implementation (reference-cpu).
#include "harness/dtype.h"
#include "impls/reference/reference_gpu.h"
#include "tests/adversarial/adversarial.h"

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <sys/resource.h>
#include <thread>
#include <vector>

namespace mtabench::adversarial {

namespace {

constexpr const char* kSource = "tests/adversarial/host_cheats.cpp";

std::size_t bytes_of(const Workload& w, std::int64_t elems) {
  return static_cast<std::size_t>(elems) * dtype_size(w.dtype);
}

// A host cheat that can fall back on the correct CPU implementation.
class HostCheat : public Cheat {
public:
  HostCheat(std::string name, std::string trick)
      : Cheat(std::move(name), std::move(trick), Location::host, kSource) {}
  void initialize(const Workload& w, const DeviceInfo* dev, cudaStream_t s) override {
    w_ = w;
    ref_->initialize(w, dev, s);
  }

protected:
  void compute(const TensorArgs& t) { ref_->run(t, nullptr); }
  Workload w_;

private:
  std::unique_ptr<Implementation> ref_ = reference::make_cpu();
};

// adv-host-nowrite: returns without writing y. Caught by: the poisoned output ("output left unwritten").
class NoWrite final : public HostCheat {
public:
  NoWrite() : HostCheat("adv-host-nowrite", "returns without writing the output") {}
  void run(const TensorArgs&, cudaStream_t) override {}
};

// adv-host-cache-ptr: keeps a copy of its last output and returns it when the four pointers repeat.
// Caught by: inputs whose contents change between calls while the pointers stay ("first call":
// the warm-up call's answer comes back; "relative L2 error ... over the tolerance").
class CachePtr final : public HostCheat {
public:
  CachePtr() : HostCheat("adv-host-cache-ptr", "caches its output by input pointers") {}
  void run(const TensorArgs& t, cudaStream_t) override {
    const std::size_t n = bytes_of(w_, w_.y_elems());
    if (!cache_.empty() && t.scores == last_.scores && t.weight == last_.weight && t.bias == last_.bias &&
        t.y == last_.y) {
      std::memcpy(t.y, cache_.data(), n);
      return;
    }
    compute(t);
    cache_.assign(static_cast<const unsigned char*>(t.y), static_cast<const unsigned char*>(t.y) + n);
    last_ = t;
  }

private:
  TensorArgs last_{};
  std::vector<unsigned char> cache_;
};

// adv-host-cache-hash: keys its cache on the first 16 bytes of scores.
// Caught by: the gate's "weights changed, scores unchanged" call (relative L2 error).
class CacheHash final : public HostCheat {
public:
  CacheHash() : HostCheat("adv-host-cache-hash", "caches its output keyed by the first few score values") {}
  void run(const TensorArgs& t, cudaStream_t) override {
    const std::size_t n = bytes_of(w_, w_.y_elems());
    const auto* s = static_cast<const unsigned char*>(t.scores);
    const std::vector<unsigned char> key(s, s + std::min<std::size_t>(16, bytes_of(w_, w_.scores_elems())));
    if (!cache_.empty() && key == key_) {
      std::memcpy(t.y, cache_.data(), n);
      return;
    }
    compute(t);
    cache_.assign(static_cast<const unsigned char*>(t.y), static_cast<const unsigned char*>(t.y) + n);
    key_ = key;
  }

private:
  std::vector<unsigned char> key_, cache_;
};

// adv-host-zero-inputs: zeroes its const inputs and writes zeros (the true answer for zero
// inputs). Caught by: the mutation check ("inputs modified by the implementation: scores, weight, bias").
class ZeroInputs final : public HostCheat {
public:
  ZeroInputs() : HostCheat("adv-host-zero-inputs", "zeroes its (const) inputs and writes zeros") {}
  void run(const TensorArgs& t, cudaStream_t) override {
    std::memset(const_cast<void*>(t.scores), 0, bytes_of(w_, w_.scores_elems()));
    std::memset(const_cast<void*>(t.weight), 0, bytes_of(w_, w_.weight_elems()));
    std::memset(const_cast<void*>(t.bias), 0, bytes_of(w_, w_.bias_elems()));
    std::memset(t.y, 0, bytes_of(w_, w_.y_elems()));
  }
};

// adv-host-upper-garbage: correct on and below the diagonal, finite nonzero values above.
// Caught by: the masked-region check ("masked region (j > i) not exactly zero").
class UpperGarbage final : public HostCheat {
public:
  UpperGarbage()
      : HostCheat("adv-host-upper-garbage", "correct below the diagonal, finite garbage above it") {}
  void run(const TensorArgs& t, cudaStream_t) override {
    compute(t);
    const std::int64_t S = w_.seq;
    for (std::int64_t x = 0; x < w_.y_elems(); ++x) {
      const std::int64_t j = x % S, i = (x / S) % S;
      if (j > i)
        store_from_float(t.y, w_.dtype, static_cast<std::size_t>(x), 0.25f + static_cast<float>((j - i) % 7));
    }
  }
};

// adv-host-fp16-accum: on fp32 workloads, every operation rounded to fp16 (as __half arithmetic
// would: inputs, max, differences, exp, the running sums, the quotient, each multiply-add).
// Caught by: the fp32 tolerance 1e-5 ("relative L2 error ... over the tolerance 1e-05").
class Fp16Accum final : public HostCheat {
public:
  Fp16Accum() : HostCheat("adv-host-fp16-accum", "computes fp32 workloads in fp16 with fp16 accumulation") {}
  Support check_support(const Workload& w, const DeviceInfo* dev) const override {
    if (w.dtype != DType::fp32)
      return Support::no("fp32 workloads only (the trick is fp16 math on fp32 data)");
    return HostCheat::check_support(w, dev);
  }
  void run(const TensorArgs& t, cudaStream_t) override {
    const auto h = [](float v) { return fp16_to_float(float_to_fp16(v)); };
    const std::int64_t S = w_.seq, C = w_.heads_in, O = w_.heads_out, K = w_.k, r = w_.r();
    const auto* scores = static_cast<const float*>(t.scores);
    const auto* weight = static_cast<const float*>(t.weight);
    const auto* bias = static_cast<const float*>(t.bias);
    auto* y = static_cast<float*>(t.y);
    for (std::int64_t x = 0; x < w_.y_elems(); ++x) {
      const std::int64_t j = x % S, i = (x / S) % S, o = (x / (S * S)) % O, b = x / (S * S * O);
      if (j > i) {
        y[x] = 0.f;
        continue;
      }
      float z = h(bias[o]);
      for (std::int64_t c = 0; c < C; ++c)
        for (std::int64_t u = 0; u < K; ++u) {
          const std::int64_t ii = i + u - r;
          if (ii < 0 || ii >= S) continue;
          const float* row = scores + ((b * C + c) * S + ii) * S;
          float m = h(row[0]);
          for (std::int64_t jj = 1; jj <= ii; ++jj)
            m = std::max(m, h(row[jj]));
          float l = 0.f;
          for (std::int64_t jj = 0; jj <= ii; ++jj)
            l = h(l + h(std::exp(h(h(row[jj]) - m))));
          for (std::int64_t v = 0; v < K; ++v) {
            const std::int64_t jj = j + v - r;
            if (jj < 0 || jj > ii) continue;
            const float p = h(h(std::exp(h(h(row[jj]) - m))) / l);
            z = h(std::fma(h(weight[((o * C + c) * K + u) * K + v]), p, z));
          }
        }
      y[x] = z;
    }
  }
};

// adv-host-seed-only: the seed shape and bf16 hard-coded (see device_math.cu's seed_only_kernel):
// right on the seed workload, garbage (never out of bounds) on every other.
// Caught by: the gate on any other shape; passing on the seed shape itself is correct.
class SeedOnly final : public HostCheat {
public:
  SeedOnly()
      : HostCheat("adv-host-seed-only",
                  "hard-codes the seed shape (k3 seq32 b2 h4/4 bf16), garbage elsewhere") {}
  void run(const TensorArgs& t, cudaStream_t) override {
    namespace s = seed_shape;
    // Sizes in bf16 units of each buffer's bytes, so that nothing is read or written outside it.
    const auto units = [&](std::int64_t elems) {
      return elems * static_cast<std::int64_t>(dtype_size(w_.dtype)) / 2;
    };
    const std::int64_t n_scores = units(w_.scores_elems()), n_weight = units(w_.weight_elems()),
                       n_bias = units(w_.bias_elems()), n_y = units(w_.y_elems());
    const auto ld = [](const void* p, std::int64_t idx) {
      return load_as_float(p, DType::bf16, static_cast<std::size_t>(idx));
    };
    for (std::int64_t x = 0; x < n_y; ++x) {
      const long long j = x % s::S, i = (x / s::S) % s::S, o = (x / (s::S * s::S)) % s::O,
                      b = (x / (s::S * s::S * s::O)) % s::B;
      float z = 0.f;
      if (j <= i) {
        z = ld(t.bias, o % n_bias);
        for (long long c = 0; c < s::C; ++c)
          for (int u = 0; u < s::K; ++u) {
            const long long ii = i + u - s::R;
            if (ii < 0 || ii >= s::S) continue;
            const long long row = ((b * s::C + c) * s::S + ii) * s::S;
            float m = -INFINITY;
            for (long long jj = 0; jj <= ii; ++jj)
              m = std::max(m, ld(t.scores, (row + jj) % n_scores));
            float l = 0.f;
            for (long long jj = 0; jj <= ii; ++jj)
              l += std::exp(ld(t.scores, (row + jj) % n_scores) - m);
            for (int v = 0; v < s::K; ++v) {
              const long long jj = j + v - s::R;
              if (jj < 0 || jj > ii) continue;
              z += ld(t.weight, (((o * s::C + c) * s::K + u) * s::K + v) % n_weight) *
                   (std::exp(ld(t.scores, (row + jj) % n_scores) - m) / l);
            }
          }
      }
      store_from_float(t.y, DType::bf16, static_cast<std::size_t>(x), z);
    }
  }
};

// adv-host-crash: dies in the middle of a call (a segmentation fault, as a wild pointer would
// cause; core dumps switched off first so that the test leaves no core file behind).
// Caught by: the case's child process: the parent sees it killed by SIGSEGV and writes a "failed"
// record ("the case's process ended without a record: killed by signal 11"), then goes on.
class Crash final : public HostCheat {
public:
  Crash() : HostCheat("adv-host-crash", "crashes (SIGSEGV) inside the call") {}
  void run(const TensorArgs&, cudaStream_t) override {
    const struct rlimit no_core { 0, 0 };
    setrlimit(RLIMIT_CORE, &no_core);
    std::raise(SIGSEGV);
  }
};

// adv-host-hang: never returns. Caught by: the per-case time limit ("timeout").
class Hang final : public HostCheat {
public:
  Hang() : HostCheat("adv-host-hang", "never returns from the call") {}
  void run(const TensorArgs&, cudaStream_t) override {
    for (;;)
      std::this_thread::sleep_for(std::chrono::hours(1));
  }
};

} // namespace

std::unique_ptr<Implementation> make_host_nowrite() {
  return std::make_unique<NoWrite>();
}
std::unique_ptr<Implementation> make_host_cache_ptr() {
  return std::make_unique<CachePtr>();
}
std::unique_ptr<Implementation> make_host_cache_hash() {
  return std::make_unique<CacheHash>();
}
std::unique_ptr<Implementation> make_host_zero_inputs() {
  return std::make_unique<ZeroInputs>();
}
std::unique_ptr<Implementation> make_host_upper_garbage() {
  return std::make_unique<UpperGarbage>();
}
std::unique_ptr<Implementation> make_host_fp16_accum() {
  return std::make_unique<Fp16Accum>();
}
std::unique_ptr<Implementation> make_host_seed_only() {
  return std::make_unique<SeedOnly>();
}
std::unique_ptr<Implementation> make_host_crash() {
  return std::make_unique<Crash>();
}
std::unique_ptr<Implementation> make_host_hang() {
  return std::make_unique<Hang>();
}

} // namespace mtabench::adversarial
