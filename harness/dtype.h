#pragma once
// The three element types of a workload and exact host-side conversions (round to nearest
// even), so the oracle reads the very values the device reads.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

namespace mtabench {

enum class DType { bf16, fp16, fp32 };

inline const char* dtype_name(DType t) {
  switch (t) {
    case DType::bf16: return "bf16";
    case DType::fp16: return "fp16";
    case DType::fp32: return "fp32";
  }
  return "?";
}
inline std::size_t dtype_size(DType t) { return t == DType::fp32 ? 4 : 2; }
std::optional<DType> parse_dtype(const std::string& s);

inline std::uint32_t float_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bits_float(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline std::uint16_t float_to_bf16(float f) {
  std::uint32_t u = float_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((u >> 16) | 0x40);  // NaN
  u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest even
  return static_cast<std::uint16_t>(u >> 16);
}
inline float bf16_to_float(std::uint16_t h) { return bits_float(static_cast<std::uint32_t>(h) << 16); }

std::uint16_t float_to_fp16(float f);
float fp16_to_float(std::uint16_t h);

// Reads element i of a buffer of type t as a float (exact for all three types).
inline float load_as_float(const void* base, DType t, std::size_t i) {
  switch (t) {
    case DType::bf16: return bf16_to_float(static_cast<const std::uint16_t*>(base)[i]);
    case DType::fp16: return fp16_to_float(static_cast<const std::uint16_t*>(base)[i]);
    case DType::fp32: return static_cast<const float*>(base)[i];
  }
  return 0.f;
}
inline void store_from_float(void* base, DType t, std::size_t i, float v) {
  switch (t) {
    case DType::bf16: static_cast<std::uint16_t*>(base)[i] = float_to_bf16(v); break;
    case DType::fp16: static_cast<std::uint16_t*>(base)[i] = float_to_fp16(v); break;
    case DType::fp32: static_cast<float*>(base)[i] = v; break;
  }
}

}  // namespace mtabench
