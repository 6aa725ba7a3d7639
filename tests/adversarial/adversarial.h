#pragma once
// Adversarial implementations (SPEC §4, issue 4): each plays one trick that has been used to game
// kernel leaderboards, and the correctness gate must reject it with the outcome its comment names.
// They are compiled into the test build only (mtabench_adversarial), never into mtabench.
//
// Device cheats (cuda, names adv-*) live in device_*.cu; host analogues (c++, names adv-host-*)
// in host_cheats.cpp, so that the gate's checks can be exercised on a machine without a GPU.
// Each class's comment says the trick and the check that must catch it; adversarial_test.cpp
// asserts exactly that.
#include "impls/impl.h"

#include <memory>
#include <string>
#include <utility>

namespace mtabench::adversarial {

// builtin_registry() followed by every adv-* implementation: the registry of mtabench_adversarial.
const Registry& registry();

// What every cheat declares: its name, its trick in one line, where it runs.
class Cheat : public Implementation {
public:
  Cheat(std::string name, std::string trick, Location where, std::string source)
      : name_(std::move(name)), trick_(std::move(trick)), where_(where), source_(std::move(source)) {}
  ImplInfo info() const override {
    ImplInfo i;
    i.name = name_;
    i.version = "1";
    i.language = where_ == Location::device ? "cuda" : "c++";
    i.license = "Apache-2.0";
    i.source = source_;
    i.description = "ADVERSARIAL (test build only): " + trick_;
    i.location = where_;
    return i;
  }
  Support check_support(const Workload&, const DeviceInfo* dev) const override {
    if (where_ == Location::device && !dev) return Support::no("needs a CUDA device");
    return Support::yes();
  }

private:
  std::string name_, trick_;
  Location where_;
  std::string source_;
};

// The seed workload's shape (SPEC §1, the leaderboard page): k 3, seq 32, batch 2, heads 4/4, bf16.
// adv-seed-only and adv-host-seed-only hard-code it.
namespace seed_shape {
inline constexpr int K = 3, R = 1;
inline constexpr long long S = 32, B = 2, C = 4, O = 4;
inline constexpr long long kScores = B * C * S * S, kY = B * O * S * S, kWeight = O * C * K * K, kBias = O;
} // namespace seed_shape

// Device cheats (device_output.cu, device_cache.cu, device_stream.cu, device_math.cu).
std::unique_ptr<Implementation> make_nowrite();
std::unique_ptr<Implementation> make_cache_ptr();
std::unique_ptr<Implementation> make_cache_hash();
std::unique_ptr<Implementation> make_zero_inputs();
std::unique_ptr<Implementation> make_other_stream();
std::unique_ptr<Implementation> make_fork_nojoin(); // beyond the ten: 5's quieter variant
std::unique_ptr<Implementation> make_upper_garbage();
std::unique_ptr<Implementation> make_fp16_accum();
std::unique_ptr<Implementation> make_seed_only();
std::unique_ptr<Implementation> make_spin();
std::unique_ptr<Implementation> make_oob();

// Host analogues (host_cheats.cpp).
std::unique_ptr<Implementation> make_host_nowrite();
std::unique_ptr<Implementation> make_host_cache_ptr();
std::unique_ptr<Implementation> make_host_cache_hash();
std::unique_ptr<Implementation> make_host_zero_inputs();
std::unique_ptr<Implementation> make_host_upper_garbage();
std::unique_ptr<Implementation> make_host_fp16_accum();
std::unique_ptr<Implementation> make_host_seed_only();
std::unique_ptr<Implementation> make_host_crash();
std::unique_ptr<Implementation> make_host_hang();

} // namespace mtabench::adversarial
