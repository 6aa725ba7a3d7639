// Host-side bf16/fp16 conversions (harness/dtype.h): known bit patterns (round to nearest even
// on ties, subnormals, overflow to infinity, NaN) and agreement with CUDA's own host-side
// conversions from <cuda_fp16.h> / <cuda_bf16.h> on many values.
#include "harness/dtype.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

namespace mtabench {
namespace {

float f(std::uint32_t bits) { return bits_float(bits); }

std::uint16_t cuda_fp16_bits(float x) {
  const __half h = __float2half_rn(x);
  std::uint16_t u;
  std::memcpy(&u, &h, 2);
  return u;
}
std::uint16_t cuda_bf16_bits(float x) {
  const __nv_bfloat16 h = __float2bfloat16_rn(x);
  std::uint16_t u;
  std::memcpy(&u, &h, 2);
  return u;
}
float cuda_fp16_to_float(std::uint16_t u) {
  __half h;
  std::memcpy(&h, &u, 2);
  return __half2float(h);
}
float cuda_bf16_to_float(std::uint16_t u) {
  __nv_bfloat16 h;
  std::memcpy(&h, &u, 2);
  return __bfloat162float(h);
}
bool fp16_is_nan(std::uint16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x03ffu) != 0; }
bool bf16_is_nan(std::uint16_t h) { return (h & 0x7f80u) == 0x7f80u && (h & 0x007fu) != 0; }

TEST(Dtype, NamesSizesParse) {
  EXPECT_STREQ(dtype_name(DType::bf16), "bf16");
  EXPECT_STREQ(dtype_name(DType::fp16), "fp16");
  EXPECT_STREQ(dtype_name(DType::fp32), "fp32");
  EXPECT_EQ(dtype_size(DType::bf16), 2u);
  EXPECT_EQ(dtype_size(DType::fp16), 2u);
  EXPECT_EQ(dtype_size(DType::fp32), 4u);
  EXPECT_EQ(parse_dtype("bf16"), DType::bf16);
  EXPECT_EQ(parse_dtype("fp16"), DType::fp16);
  EXPECT_EQ(parse_dtype("fp32"), DType::fp32);
  EXPECT_FALSE(parse_dtype("BF16").has_value());
  EXPECT_FALSE(parse_dtype("float32").has_value());
  EXPECT_FALSE(parse_dtype("").has_value());
}

// ---------------------------------------------------------------------------------------------
// bf16: the top 16 bits of a float, rounded to nearest even.

TEST(Bf16, ExactValues) {
  EXPECT_EQ(float_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(float_to_bf16(-2.0f), 0xc000);
  EXPECT_EQ(float_to_bf16(0.0f), 0x0000);
  EXPECT_EQ(float_to_bf16(-0.0f), 0x8000);
  EXPECT_EQ(float_to_bf16(3.140625f), 0x4049);  // exactly representable
}

TEST(Bf16, RoundsToNearestEvenOnTies) {
  EXPECT_EQ(float_to_bf16(f(0x3f808000u)), 0x3f80);  // 1 + 2^-8: tie, 0x3f80 is even
  EXPECT_EQ(float_to_bf16(f(0x3f818000u)), 0x3f82);  // tie, 0x3f81 is odd: up
  EXPECT_EQ(float_to_bf16(f(0x3f808001u)), 0x3f81);  // just above the tie
  EXPECT_EQ(float_to_bf16(f(0x3f807fffu)), 0x3f80);  // just below the tie
  EXPECT_EQ(float_to_bf16(f(0xbf818000u)), 0xbf82);  // negative tie, same rule on the magnitude
  EXPECT_EQ(float_to_bf16(f(0x3f80ffffu)), 0x3f81);
  EXPECT_EQ(float_to_bf16(f(0x3fffffffu)), 0x4000);  // carry into the exponent
}

TEST(Bf16, Subnormals) {
  EXPECT_EQ(float_to_bf16(f(0x00010000u)), 0x0001);  // smallest bf16 subnormal
  EXPECT_EQ(float_to_bf16(f(0x00008000u)), 0x0000);  // half of it: tie to even (zero)
  EXPECT_EQ(float_to_bf16(f(0x00008001u)), 0x0001);
  EXPECT_EQ(float_to_bf16(f(0x00018000u)), 0x0002);  // tie between 1 and 2: even
  EXPECT_EQ(float_to_bf16(f(0x007fffffu)), 0x0080);  // largest float subnormal rounds to the smallest normal
  EXPECT_EQ(float_to_bf16(f(0x80010000u)), 0x8001);
  EXPECT_EQ(bf16_to_float(0x0001), f(0x00010000u));
}

TEST(Bf16, OverflowToInfinity) {
  EXPECT_EQ(float_to_bf16(std::numeric_limits<float>::infinity()), 0x7f80);
  EXPECT_EQ(float_to_bf16(-std::numeric_limits<float>::infinity()), 0xff80);
  EXPECT_EQ(float_to_bf16(f(0x7f7f7fffu)), 0x7f7f);  // below the tie: largest finite bf16
  EXPECT_EQ(float_to_bf16(f(0x7f7f8000u)), 0x7f80);  // tie, 0x7f7f is odd: up to infinity
  EXPECT_EQ(float_to_bf16(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_EQ(float_to_bf16(-std::numeric_limits<float>::max()), 0xff80);
}

TEST(Bf16, NanStaysNan) {
  EXPECT_TRUE(bf16_is_nan(float_to_bf16(std::numeric_limits<float>::quiet_NaN())));
  // A NaN whose payload lives only in the low 16 bits must not round to infinity.
  EXPECT_TRUE(bf16_is_nan(float_to_bf16(f(0x7f800001u))));
  EXPECT_TRUE(bf16_is_nan(float_to_bf16(f(0x7fffffffu))));  // must not carry into the sign
  EXPECT_EQ(float_to_bf16(f(0x7fffffffu)) & 0x8000, 0);
  EXPECT_TRUE(bf16_is_nan(float_to_bf16(f(0xff800001u))));
  EXPECT_EQ(float_to_bf16(f(0xff800001u)) & 0x8000, 0x8000);
  EXPECT_TRUE(std::isnan(bf16_to_float(0x7fc0)));
}

TEST(Bf16, ToFloatIsExactForEveryPattern) {
  for (std::uint32_t h = 0; h < 0x10000u; ++h) {
    const float x = bf16_to_float(static_cast<std::uint16_t>(h));
    EXPECT_EQ(float_bits(x), h << 16) << std::hex << h;
    if (!bf16_is_nan(static_cast<std::uint16_t>(h))) {
      ASSERT_EQ(float_to_bf16(x), h) << std::hex << h;  // round trip
      ASSERT_EQ(float_bits(cuda_bf16_to_float(static_cast<std::uint16_t>(h))), h << 16) << std::hex << h;
    }
  }
}

TEST(Bf16, AgreesWithCudaOnRandomValues) {
  std::mt19937_64 rng(20240601);
  int nan_seen = 0;
  for (int n = 0; n < 2'000'000; ++n) {
    // Half the draws are arbitrary bit patterns (all exponents, NaN, inf, subnormals); half are
    // ties or near-ties (low 16 bits 0x8000 +- 1), where rounding mistakes show.
    std::uint32_t u = static_cast<std::uint32_t>(rng());
    if (n % 2) u = (u & 0xffff0000u) | (0x8000u + static_cast<std::uint32_t>(rng() % 3) - 1u);
    const float x = f(u);
    const std::uint16_t ours = float_to_bf16(x), cuda = cuda_bf16_bits(x);
    if (std::isnan(x)) {
      ++nan_seen;
      ASSERT_TRUE(bf16_is_nan(ours)) << std::hex << u;
      ASSERT_EQ(ours & 0x8000, (u >> 16) & 0x8000) << std::hex << u;
      continue;
    }
    ASSERT_EQ(ours, cuda) << "float bits 0x" << std::hex << u;
  }
  EXPECT_GT(nan_seen, 0);
}

// ---------------------------------------------------------------------------------------------
// fp16: IEEE binary16, round to nearest even, with subnormals.

TEST(Fp16, ExactValues) {
  EXPECT_EQ(float_to_fp16(1.0f), 0x3c00);
  EXPECT_EQ(float_to_fp16(-2.0f), 0xc000);
  EXPECT_EQ(float_to_fp16(0.5f), 0x3800);
  EXPECT_EQ(float_to_fp16(0.0f), 0x0000);
  EXPECT_EQ(float_to_fp16(-0.0f), 0x8000);
  EXPECT_EQ(float_to_fp16(65504.0f), 0x7bff);  // largest finite
  EXPECT_EQ(float_to_fp16(std::ldexp(1.0f, -14)), 0x0400);  // smallest normal
  EXPECT_EQ(float_to_fp16(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(float_to_fp16(std::ldexp(1023.0f, -24)), 0x03ff);  // largest subnormal
}

TEST(Fp16, RoundsToNearestEvenOnTies) {
  EXPECT_EQ(float_to_fp16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);      // tie, even down
  EXPECT_EQ(float_to_fp16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);  // tie, odd up
  EXPECT_EQ(float_to_fp16(std::nextafter(1.0f + std::ldexp(1.0f, -11), 2.0f)), 0x3c01);
  EXPECT_EQ(float_to_fp16(std::nextafter(1.0f + std::ldexp(1.0f, -11), 0.0f)), 0x3c00);
  EXPECT_EQ(float_to_fp16(-(1.0f + 3 * std::ldexp(1.0f, -11))), 0xbc02);
  EXPECT_EQ(float_to_fp16(2047.0f / 1024.0f + std::ldexp(1.0f, -11)), 0x4000);  // carry into the exponent
}

TEST(Fp16, Subnormals) {
  EXPECT_EQ(float_to_fp16(std::ldexp(1.0f, -25)), 0x0000);      // half the smallest: tie to zero
  EXPECT_EQ(float_to_fp16(std::nextafter(std::ldexp(1.0f, -25), 1.0f)), 0x0001);
  EXPECT_EQ(float_to_fp16(std::ldexp(3.0f, -25)), 0x0002);      // 1.5 ulp: tie, up to even
  EXPECT_EQ(float_to_fp16(std::ldexp(5.0f, -25)), 0x0002);      // 2.5 ulp: tie, down to even
  EXPECT_EQ(float_to_fp16(std::ldexp(2047.0f, -25)), 0x0400);   // 1023.5 ulp: up to the smallest normal
  EXPECT_EQ(float_to_fp16(std::ldexp(1.0f, -30)), 0x0000);
  EXPECT_EQ(float_to_fp16(-std::ldexp(1.0f, -24)), 0x8001);
  EXPECT_EQ(float_to_fp16(f(0x00000001u)), 0x0000);  // float subnormal: far below fp16's
  EXPECT_EQ(fp16_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(fp16_to_float(0x03ff), std::ldexp(1023.0f, -24));
  EXPECT_EQ(fp16_to_float(0x8001), -std::ldexp(1.0f, -24));
  EXPECT_EQ(float_bits(fp16_to_float(0x8000)), 0x80000000u);  // negative zero keeps its sign
}

TEST(Fp16, OverflowToInfinity) {
  EXPECT_EQ(float_to_fp16(65519.0f), 0x7bff);                          // below the tie
  EXPECT_EQ(float_to_fp16(std::nextafter(65520.0f, 0.0f)), 0x7bff);
  EXPECT_EQ(float_to_fp16(65520.0f), 0x7c00);                          // the tie: 0x7bff is odd, up
  EXPECT_EQ(float_to_fp16(1e6f), 0x7c00);
  EXPECT_EQ(float_to_fp16(-1e6f), 0xfc00);
  EXPECT_EQ(float_to_fp16(std::numeric_limits<float>::max()), 0x7c00);
  EXPECT_EQ(float_to_fp16(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(float_to_fp16(-std::numeric_limits<float>::infinity()), 0xfc00);
  // SPEC §1: the -1e9 mask value becomes -inf in fp16.
  EXPECT_EQ(float_to_fp16(-1e9f), 0xfc00);
  EXPECT_TRUE(std::isinf(fp16_to_float(0x7c00)));
  EXPECT_GT(fp16_to_float(0x7c00), 0.0f);
}

TEST(Fp16, NanStaysNan) {
  EXPECT_TRUE(fp16_is_nan(float_to_fp16(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_TRUE(fp16_is_nan(float_to_fp16(f(0x7f800001u))));  // payload only in bits fp16 drops
  EXPECT_TRUE(fp16_is_nan(float_to_fp16(f(0xffc00000u))));
  EXPECT_EQ(float_to_fp16(f(0xffc00000u)) & 0x8000, 0x8000);
  EXPECT_TRUE(std::isnan(fp16_to_float(0x7e00)));
  EXPECT_TRUE(std::isnan(fp16_to_float(0x7c01)));
  EXPECT_TRUE(std::isnan(fp16_to_float(0xffff)));  // the harness's poison pattern reads as NaN
}

TEST(Fp16, ToFloatMatchesCudaForEveryPattern) {
  for (std::uint32_t h = 0; h < 0x10000u; ++h) {
    const auto hh = static_cast<std::uint16_t>(h);
    const float ours = fp16_to_float(hh), cuda = cuda_fp16_to_float(hh);
    if (fp16_is_nan(hh)) {
      ASSERT_TRUE(std::isnan(ours)) << std::hex << h;
      continue;
    }
    ASSERT_EQ(float_bits(ours), float_bits(cuda)) << std::hex << h;
    ASSERT_EQ(float_to_fp16(ours), hh) << std::hex << h;  // round trip
  }
}

TEST(Fp16, AgreesWithCudaOnRandomValues) {
  std::mt19937_64 rng(4242);
  std::uniform_real_distribution<float> exp_dist(-30.0f, 17.0f);
  for (int n = 0; n < 2'000'000; ++n) {
    float x;
    switch (n % 3) {
      case 0:  // arbitrary bit patterns
        x = f(static_cast<std::uint32_t>(rng()));
        break;
      case 1: {  // log-uniform over fp16's range and past both ends
        const float m = 1.0f + static_cast<float>(rng() % (1u << 23)) * std::ldexp(1.0f, -23);
        x = std::ldexp(m, static_cast<int>(std::floor(exp_dist(rng)))) * ((rng() & 1) ? -1.0f : 1.0f);
        break;
      }
      default: {  // ties and near-ties at fp16 precision
        const std::uint16_t h = static_cast<std::uint16_t>(rng() & 0x7bffu);
        const float a = fp16_to_float(h), b = fp16_to_float(static_cast<std::uint16_t>(h + 1));
        const float mid = a + (b - a) / 2;
        const int d = static_cast<int>(rng() % 3) - 1;
        x = d == 0 ? mid : std::nextafter(mid, d > 0 ? 1e30f : -1e30f);
        if (rng() & 1) x = -x;
      }
    }
    const std::uint16_t ours = float_to_fp16(x);
    if (std::isnan(x)) {
      ASSERT_TRUE(fp16_is_nan(ours)) << std::hex << float_bits(x);
      continue;
    }
    ASSERT_EQ(ours, cuda_fp16_bits(x)) << "float bits 0x" << std::hex << float_bits(x) << " (" << x << ")";
  }
}

// ---------------------------------------------------------------------------------------------
// Buffers in each dtype

TEST(Dtype, LoadStoreRoundTrip) {
  unsigned char buf[16] = {};
  store_from_float(buf, DType::fp32, 1, 0.1f);
  EXPECT_EQ(load_as_float(buf, DType::fp32, 1), 0.1f);
  store_from_float(buf, DType::bf16, 3, 0.1f);
  EXPECT_EQ(load_as_float(buf, DType::bf16, 3), bf16_to_float(float_to_bf16(0.1f)));
  EXPECT_NE(load_as_float(buf, DType::bf16, 3), 0.1f);  // bf16 cannot hold 0.1 exactly
  store_from_float(buf, DType::fp16, 0, 0.1f);
  EXPECT_EQ(load_as_float(buf, DType::fp16, 0), fp16_to_float(float_to_fp16(0.1f)));
  EXPECT_EQ(float_to_fp16(0.1f), 0x2e66);
  EXPECT_EQ(float_to_bf16(0.1f), 0x3dcd);
}

}  // namespace
}  // namespace mtabench
