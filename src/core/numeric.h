// Storage types for the reduced-precision floats kiln supports (fp16, bf16, fp8 e4m3fn/e5m2).
// Each converts to and from float with round-to-nearest-even; arithmetic happens in float.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace kiln {

namespace numeric_detail {

// Encodes |a| (finite, non-negative) into a sign-less bit pattern of a float with `kMant`
// mantissa bits and exponent `bias`, rounding to nearest even. The caller checks overflow.
template <int kMant, int kBias>
inline uint32_t encode_magnitude(double a) {
  if (a == 0.0) return 0;
  int e2 = 0;
  std::frexp(a, &e2);  // a = m * 2^e2, m in [0.5, 1)
  int e = e2 - 1;      // a = 1.xxx * 2^e
  const int emin = 1 - kBias;
  if (e < emin) e = emin;  // subnormal range shares the quantum of the smallest normal
  const double quantum = std::ldexp(1.0, e - kMant);
  const double q = std::nearbyint(a / quantum);  // default rounding mode: nearest even
  const auto qi = static_cast<uint64_t>(q);
  if (e == emin && qi < (1ull << kMant)) return static_cast<uint32_t>(qi);  // subnormal
  // qi in [2^M, 2^(M+1)]; carry into the exponent when rounding reached 2^(M+1).
  uint64_t exp_field = static_cast<uint64_t>(e + kBias);
  uint64_t mant = qi;
  if (mant >= (2ull << kMant)) {
    mant >>= 1;
    ++exp_field;
  }
  return static_cast<uint32_t>((exp_field << kMant) | (mant - (1ull << kMant)));
}

template <int kMant, int kBias>
inline float decode_magnitude(uint32_t bits) {
  const uint32_t exp_field = bits >> kMant;
  const uint32_t mant = bits & ((1u << kMant) - 1);
  if (exp_field == 0) return static_cast<float>(std::ldexp(static_cast<double>(mant), 1 - kBias - kMant));
  return static_cast<float>(
      std::ldexp(static_cast<double>(mant | (1u << kMant)), static_cast<int>(exp_field) - kBias - kMant));
}

}  // namespace numeric_detail

struct float16 {
  uint16_t bits = 0;
  float16() = default;
  explicit float16(float f) : bits(from_float(f)) {}
  operator float() const { return to_float(bits); }

  static uint16_t from_float(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000);
    if (std::isnan(f)) return sign | 0x7E00;
    const double a = std::fabs(static_cast<double>(f));
    if (std::isinf(f)) return sign | 0x7C00;
    uint32_t m = numeric_detail::encode_magnitude<10, 15>(a);
    if (m >= 0x7C00) m = 0x7C00;  // overflow becomes infinity
    return static_cast<uint16_t>(sign | m);
  }
  static float to_float(uint16_t h) {
    const float sign = (h & 0x8000) ? -1.0f : 1.0f;
    const uint32_t mag = h & 0x7FFF;
    if ((mag >> 10) == 0x1F) {
      return (mag & 0x3FF) ? std::numeric_limits<float>::quiet_NaN()
                           : sign * std::numeric_limits<float>::infinity();
    }
    return sign * numeric_detail::decode_magnitude<10, 15>(mag);
  }
};

struct bfloat16 {
  uint16_t bits = 0;
  bfloat16() = default;
  explicit bfloat16(float f) : bits(from_float(f)) {}
  operator float() const { return to_float(bits); }

  static uint16_t from_float(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    if (std::isnan(f)) return static_cast<uint16_t>((u >> 16) | 0x40);
    const uint32_t rounding = 0x7FFF + ((u >> 16) & 1);  // round to nearest even
    return static_cast<uint16_t>((u + rounding) >> 16);
  }
  static float to_float(uint16_t b) {
    uint32_t u = static_cast<uint32_t>(b) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
};

// FP8 E4M3FN: no infinities, 0x7F/0xFF are NaN, largest finite 448.
struct float8e4m3fn {
  uint8_t bits = 0;
  float8e4m3fn() = default;
  explicit float8e4m3fn(float f, bool saturate = true) : bits(from_float(f, saturate)) {}
  operator float() const { return to_float(bits); }

  static uint8_t from_float(float f, bool saturate = true) {
    const uint8_t sign = std::signbit(f) ? 0x80 : 0;
    if (std::isnan(f)) return 0x7F | sign;
    if (std::isinf(f)) return saturate ? (sign | 0x7E) : (sign | 0x7F);
    uint32_t m = numeric_detail::encode_magnitude<3, 7>(std::fabs(static_cast<double>(f)));
    if (m > 0x7E) m = saturate ? 0x7E : 0x7F;
    return static_cast<uint8_t>(sign | m);
  }
  static float to_float(uint8_t b) {
    const float sign = (b & 0x80) ? -1.0f : 1.0f;
    const uint32_t mag = b & 0x7F;
    if (mag == 0x7F) return std::numeric_limits<float>::quiet_NaN();
    return sign * numeric_detail::decode_magnitude<3, 7>(mag);
  }
};

// FP8 E5M2: IEEE-like, with infinities; largest finite 57344.
struct float8e5m2 {
  uint8_t bits = 0;
  float8e5m2() = default;
  explicit float8e5m2(float f, bool saturate = true) : bits(from_float(f, saturate)) {}
  operator float() const { return to_float(bits); }

  static uint8_t from_float(float f, bool saturate = true) {
    const uint8_t sign = std::signbit(f) ? 0x80 : 0;
    if (std::isnan(f)) return 0x7F | sign;
    if (std::isinf(f)) return saturate ? (sign | 0x7B) : (sign | 0x7C);
    uint32_t m = numeric_detail::encode_magnitude<2, 15>(std::fabs(static_cast<double>(f)));
    if (m > 0x7B) m = saturate ? 0x7B : 0x7C;
    return static_cast<uint8_t>(sign | m);
  }
  static float to_float(uint8_t b) {
    const float sign = (b & 0x80) ? -1.0f : 1.0f;
    const uint32_t mag = b & 0x7F;
    if ((mag >> 2) == 0x1F) {
      return (mag & 0x3) ? std::numeric_limits<float>::quiet_NaN()
                         : sign * std::numeric_limits<float>::infinity();
    }
    return sign * numeric_detail::decode_magnitude<2, 15>(mag);
  }
};

// True for kiln's reduced-precision float storage types (computed in float).
template <class T>
inline constexpr bool is_small_float_v =
    std::is_same_v<T, float16> || std::is_same_v<T, bfloat16> || std::is_same_v<T, float8e4m3fn> ||
    std::is_same_v<T, float8e5m2>;

// The type arithmetic on T is done in: float for the small floats, T otherwise.
template <class T>
using compute_t = std::conditional_t<is_small_float_v<T>, float, T>;

}  // namespace kiln
