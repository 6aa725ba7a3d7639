#pragma once
// Counter-based random inputs (SPEC §1), the same function on the host and the device: element
// i of tensor t in input set s under seed S is a pure function of (S, t, s, i). Any element can
// be regenerated anywhere, inputs change between calls by changing s, and nothing depends on the
// order of generation. Host and device libm may differ in the last bit of log/cos, so the
// harness never assumes bitwise equality: the oracle always reads back the device's inputs.
#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define MTABENCH_HD __host__ __device__ __forceinline__
#else
#define MTABENCH_HD inline
#endif

namespace mtabench::rng {

enum TensorId : std::uint64_t { kScores = 1, kWeight = 2, kBias = 3 };

MTABENCH_HD std::uint64_t mix64(std::uint64_t x) {  // SplitMix64's finalizer
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

MTABENCH_HD std::uint64_t stream_key(std::uint64_t seed, std::uint64_t tensor, std::uint64_t set) {
  return mix64(seed ^ mix64(tensor * 0x9e3779b97f4a7c15ull + mix64(set + 0x632be59bd9b4e019ull)));
}

// Standard normal by Box-Muller from one 64-bit draw (24-bit uniforms: u1 in (0,1], u2 in [0,1)).
MTABENCH_HD float normal(std::uint64_t key, std::uint64_t index) {
  const std::uint64_t h = mix64(key + (index + 1) * 0x9e3779b97f4a7c15ull);
  const float u1 = static_cast<float>((h >> 40) + 1) * (1.0f / 16777216.0f);
  const float u2 = static_cast<float>((h >> 16) & 0xffffffull) * (1.0f / 16777216.0f);
  return sqrtf(-2.0f * logf(u1)) * cosf(6.28318530717958647692f * u2);
}

}  // namespace mtabench::rng
