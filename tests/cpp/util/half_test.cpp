// theon/half.hpp: the float16 conversions, bit-exact against an independent reference (the
// nearest finite half found by search over all of them, ties to the even pattern) and, where
// the compiler has _Float16, against the compiler's own conversion.
#include <theon/theon.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace theon {
namespace {

bool is_nan_bits(uint16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0; }

// The correctly rounded half of `x` by definition: the nearest of the finite halves (an exact
// comparison in long double arithmetic, which holds every float and double difference used
// here exactly enough: the candidates are two adjacent halves), ties to the even pattern; at
// or beyond 65520 (halfway from 65504 to 2^16), infinity.
uint16_t reference_half(double x) {
  if (std::isnan(x)) return 0x7e00;
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  const double a = std::fabs(x);
  if (a >= 65520.0) return sign | 0x7c00;
  // Positive finite halves are increasing in their bit patterns 0x0000..0x7bff: binary search
  // for the largest pattern whose value is <= a.
  int lo = 0, hi = 0x7bff;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (static_cast<double>(half_bits_to_float(static_cast<uint16_t>(mid))) <= a) lo = mid;
    else hi = mid - 1;
  }
  const double below = half_bits_to_float(static_cast<uint16_t>(lo));
  if (below == a || lo == 0x7bff) return sign | static_cast<uint16_t>(lo);
  const double above = half_bits_to_float(static_cast<uint16_t>(lo + 1));
  const long double d_below = static_cast<long double>(a) - below, d_above = static_cast<long double>(above) - a;
  int pick = lo;
  if (d_above < d_below || (d_above == d_below && (lo & 1))) pick = lo + 1;
  return sign | static_cast<uint16_t>(pick);
}

float float_of_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

TEST(Half, EveryHalfRoundTripsExactlyThroughFloatAndDouble) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const uint16_t b = static_cast<uint16_t>(h);
    const float f = half_bits_to_float(b);
    if (is_nan_bits(b)) {
      ASSERT_TRUE(std::isnan(f)) << std::hex << h;
      ASSERT_TRUE(is_nan_bits(float_to_half_bits(f))) << std::hex << h;
      ASSERT_EQ(float_to_half_bits(f) & 0x8000u, b & 0x8000u) << "NaN sign, " << std::hex << h;
      ASSERT_EQ(float_to_half_bits(f) & 0x1ffu, b & 0x1ffu) << "NaN payload, " << std::hex << h;
      continue;
    }
    ASSERT_EQ(float_to_half_bits(f), b) << std::hex << h << " -> " << f;
    ASSERT_EQ(double_to_half_bits(static_cast<double>(f)), b) << std::hex << h;
    ASSERT_EQ(static_cast<float>(half::from_bits(b)), f);
  }
}

TEST(Half, KnownValues) {
  EXPECT_EQ(float_to_half_bits(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half_bits(-2.0f), 0xc000);
  EXPECT_EQ(float_to_half_bits(0.1f), 0x2e66);  // numpy.float16(0.1).view('u2')
  EXPECT_EQ(float_to_half_bits(-0.0f), 0x8000);
  EXPECT_EQ(float_to_half_bits(65504.0f), 0x7bff);  // the largest half
  EXPECT_EQ(float_to_half_bits(65519.996f), 0x7bff);
  EXPECT_EQ(float_to_half_bits(65520.0f), 0x7c00);  // the tie goes to the even pattern: infinity
  EXPECT_EQ(float_to_half_bits(1e9f), 0x7c00);
  EXPECT_EQ(float_to_half_bits(-std::numeric_limits<float>::infinity()), 0xfc00);
  EXPECT_EQ(float_to_half_bits(std::ldexp(1.0f, -14)), 0x0400);  // the smallest normal
  EXPECT_EQ(float_to_half_bits(std::ldexp(1.0f, -24)), 0x0001);  // the smallest subnormal
  EXPECT_EQ(float_to_half_bits(std::ldexp(1.0f, -25)), 0x0000);  // a tie: to the even 0
  EXPECT_EQ(float_to_half_bits(std::nextafter(std::ldexp(1.0f, -25), 1.0f)), 0x0001);
  EXPECT_EQ(float_to_half_bits(std::ldexp(3.0f, -25)), 0x0002);  // 1.5 units: tie to even 2
  EXPECT_EQ(float_to_half_bits(std::ldexp(5.0f, -25)), 0x0002);  // 2.5 units: tie to even 2
  EXPECT_EQ(float_to_half_bits(std::ldexp(1.0f, -30)), 0x0000);
  EXPECT_EQ(float_to_half_bits(-std::ldexp(1.0f, -30)), 0x8000);
  EXPECT_EQ(float_to_half_bits(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(float_to_half_bits(1.0f + std::ldexp(1.0f, -11)), 0x3c00);      // tie: down to even
  EXPECT_EQ(float_to_half_bits(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);  // tie: up to even
  EXPECT_EQ(float_to_half_bits(std::ldexp(2047.0f, -25)), 0x0400);  // rounds up into the normals
  EXPECT_TRUE(is_nan_bits(float_to_half_bits(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_TRUE(is_nan_bits(float_to_half_bits(float_of_bits(0x7f800001u))));  // a signalling NaN stays NaN
  EXPECT_TRUE(is_nan_bits(double_to_half_bits(-std::numeric_limits<double>::quiet_NaN())));
  // float64 rounds once: through float32 first, 1 + 2^-11 + 2^-40 would become a tie and go down.
  EXPECT_EQ(double_to_half_bits(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)), 0x3c01);
  EXPECT_EQ(double_to_half_bits(65519.99999), 0x7bff);
  EXPECT_EQ(double_to_half_bits(1e300), 0x7c00);
  EXPECT_EQ(double_to_half_bits(1e-300), 0x0000);
}

TEST(Half, RandomFloatsAndDoublesRoundToTheNearestEven) {
  std::mt19937_64 rng(17);
  for (int i = 0; i < 200000; ++i) {
    // Exponents around the half range, so normals, subnormals, ties and overflow all occur.
    const uint32_t exp = 127 - 28 + static_cast<uint32_t>(rng() % 46);
    const uint32_t bits = (static_cast<uint32_t>(rng() & 1) << 31) | (exp << 23) |
                          static_cast<uint32_t>(rng() & (i % 3 == 0 ? 0x7fe000u : 0x7fffffu));  // i%3: many ties
    const float f = float_of_bits(bits);
    ASSERT_EQ(float_to_half_bits(f), reference_half(f)) << std::hexfloat << f;
#ifdef __FLT16_MAX__
    const _Float16 c = static_cast<_Float16>(f);
    uint16_t cb;
    std::memcpy(&cb, &c, 2);
    ASSERT_EQ(float_to_half_bits(f), cb) << std::hexfloat << f;
#endif
    const double d = std::ldexp(static_cast<double>(rng() >> 11), -53) * std::ldexp(1.0, static_cast<int>(rng() % 46) - 28);
    ASSERT_EQ(double_to_half_bits(d), reference_half(d)) << std::hexfloat << d;
  }
}

TEST(Half, ConversionsOfTheHalfType) {
  EXPECT_EQ(half(0.5).bits, 0x3800);
  EXPECT_EQ(half(3).bits, 0x4200);
  EXPECT_EQ(half(true).bits, 0x3c00);
  EXPECT_EQ(half(70000).bits, 0x7c00);
  EXPECT_EQ(static_cast<int>(half(-2.75f)), -2);
  EXPECT_EQ(static_cast<bool>(half(0.0f)), false);
  EXPECT_EQ(static_cast<double>(half(0.1)), 0.0999755859375);
  EXPECT_EQ(static_cast<int32_t>(half::from_bits(0x7c00)), 0);  // int64 min, wrapped to int32
  EXPECT_EQ(static_cast<int64_t>(half::from_bits(0x7e00)), std::numeric_limits<int64_t>::min());
}

TEST(Half, Float16Arrays) {
  Array a = Array::from_vector<half>({half(1.5f), half(-2.0f), half(0.1f)});
  EXPECT_EQ(a.dtype(), DType::Float16);
  EXPECT_EQ(a.nbytes(), 6u);
  EXPECT_EQ(a.item(2), 0.0999755859375);
  Array f = a.astype(DType::Float32);
  EXPECT_EQ(f.to_vector<float>(), (std::vector<float>{1.5f, -2.0f, 0.0999755859375f}));
  Array back = Array::from_vector<double>({65504.0, 65520.0, 1e-8, 3.0}).astype(DType::Float16);
  auto bits = back.to_vector<half>();
  EXPECT_EQ(bits[0].bits, 0x7bff);
  EXPECT_EQ(bits[1].bits, 0x7c00);
  EXPECT_EQ(bits[2].bits, 0x0000);  // 1e-8 < 2^-25
  EXPECT_EQ(bits[3].bits, 0x4200);
  EXPECT_EQ(Array::full({2}, 0.1, DType::Float16).to_vector<half>()[1].bits, 0x2e66);
  EXPECT_EQ(Array::arange(4, DType::Float16).item(3), 3.0);
  Array t = Array::from_vector<half>({half(1), half(2), half(3), half(4)}, Shape{2, 2}).transpose().contiguous();
  EXPECT_EQ(t.to_vector<double>(), (std::vector<double>{1, 3, 2, 4}));
}

}  // namespace
}  // namespace theon
