#include "harness/dtype.h"

#include <cmath>

namespace mtabench {

std::optional<DType> parse_dtype(const std::string& s) {
  if (s == "bf16") return DType::bf16;
  if (s == "fp16") return DType::fp16;
  if (s == "fp32") return DType::fp32;
  return std::nullopt;
}

std::uint16_t float_to_fp16(float f) {
  const std::uint32_t u = float_bits(f);
  const std::uint16_t sign = static_cast<std::uint16_t>((u >> 16) & 0x8000u);
  const std::uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return sign | 0x7e00u;  // NaN
  if (a >= 0x477ff000u) return sign | 0x7c00u;  // rounds to >= 65520: infinity
  if (a < 0x33000001u) return sign;             // below half the smallest subnormal: zero
  int exp = static_cast<int>(a >> 23) - 127;
  std::uint32_t mant = (a & 0x7fffffu) | 0x800000u;  // 24-bit significand with implicit 1
  int shift;                                          // bits to drop from the 24-bit significand
  std::uint32_t base;
  if (exp < -14) {  // subnormal half: value = m * 2^-24
    shift = 13 + (-14 - exp);
    base = 0;
  } else {
    shift = 13;
    base = static_cast<std::uint32_t>(exp + 15) << 10;
    mant &= 0x7fffffu;
  }
  std::uint32_t q = mant >> shift;
  const std::uint32_t rem = mant & ((1u << shift) - 1u);
  const std::uint32_t half = 1u << (shift - 1);
  if (rem > half || (rem == half && (q & 1u))) ++q;
  // Carries ripple into the exponent field, which is exactly right (incl. subnormal -> normal).
  return static_cast<std::uint16_t>(sign | (base + q));
}

float fp16_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu;
  const std::uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    const float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  if (exp == 31) return bits_float(sign | 0x7f800000u | (mant << 13));
  return bits_float(sign | ((exp + 112u) << 23) | (mant << 13));
}

}  // namespace mtabench
