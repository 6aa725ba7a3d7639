#include "harness/rng.h"
#include "harness/tensors.h"

#include <algorithm>
#include <cmath>
#include <thread>

namespace mtabench {

InputScales input_scales(const Workload& w) {
  return {static_cast<float>(w.scale),
          static_cast<float>(1.0 / std::sqrt(static_cast<double>(w.heads_in) * w.k * w.k)), 0.1f};
}

void parallel_for(std::int64_t n, const std::function<void(std::int64_t, std::int64_t)>& f,
                  std::int64_t min_chunk) {
  if (n <= 0) return;
  const std::int64_t hw = std::max(1u, std::thread::hardware_concurrency());
  const std::int64_t workers = std::max<std::int64_t>(1, std::min(hw, n / std::max<std::int64_t>(1, min_chunk)));
  if (workers == 1) {
    f(0, n);
    return;
  }
  std::vector<std::thread> pool;
  const std::int64_t chunk = (n + workers - 1) / workers;
  for (std::int64_t t = 0; t < workers; ++t) {
    const std::int64_t b = t * chunk, e = std::min(n, b + chunk);
    if (b < e) pool.emplace_back([&f, b, e] { f(b, e); });
  }
  for (auto& th : pool) th.join();
}

namespace {
void fill(HostTensor& t, std::uint64_t seed, std::uint64_t tensor, std::uint64_t set, float sd) {
  const std::uint64_t key = rng::stream_key(seed, tensor, set);
  parallel_for(static_cast<std::int64_t>(t.elems), [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b; i < e; ++i)
      t.set(static_cast<std::size_t>(i), rng::normal(key, static_cast<std::uint64_t>(i)) * sd);
  }, 1 << 16);
}
}  // namespace

HostInputs generate_inputs_host(const Workload& w, std::uint64_t seed, std::uint64_t set) {
  const InputScales s = input_scales(w);
  HostInputs in{HostTensor(w.dtype, static_cast<std::size_t>(w.scores_elems())),
                HostTensor(w.dtype, static_cast<std::size_t>(w.weight_elems())),
                HostTensor(w.dtype, static_cast<std::size_t>(w.bias_elems()))};
  fill(in.scores, seed, rng::kScores, set, s.scores);
  fill(in.weight, seed, rng::kWeight, set, s.weight);
  fill(in.bias, seed, rng::kBias, set, s.bias);
  return in;
}

}  // namespace mtabench
