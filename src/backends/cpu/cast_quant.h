// Element conversions with ONNX Cast semantics, shared by the Cast and quantization kernels.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "backends/cpu/kernel.h"
#include "core/dispatch.h"
#include "core/numeric.h"

namespace kiln::cpu {

namespace cast_detail {

// Bit layout of kiln's reduced-precision floats, for encoding straight from double: going
// through float first would round twice (double -> float -> fp16 can differ from the
// correctly rounded fp16 by one unit).
template <class T>
struct SmallFloatLayout;
template <>
struct SmallFloatLayout<float16> {
  static constexpr int kMant = 10, kBias = 15;
  static constexpr uint32_t kSign = 0x8000, kMaxFinite = 0x7BFF, kInf = 0x7C00, kNaN = 0x7E00;
  static constexpr bool kHasInf = true, kCanSaturate = false;
};
template <>
struct SmallFloatLayout<bfloat16> {
  static constexpr int kMant = 7, kBias = 127;
  static constexpr uint32_t kSign = 0x8000, kMaxFinite = 0x7F7F, kInf = 0x7F80, kNaN = 0x7FC0;
  static constexpr bool kHasInf = true, kCanSaturate = false;
};
template <>
struct SmallFloatLayout<float8e4m3fn> {
  static constexpr int kMant = 3, kBias = 7;
  static constexpr uint32_t kSign = 0x80, kMaxFinite = 0x7E, kInf = 0x7F /* none: NaN */, kNaN = 0x7F;
  static constexpr bool kHasInf = false, kCanSaturate = true;
};
template <>
struct SmallFloatLayout<float8e5m2> {
  static constexpr int kMant = 2, kBias = 15;
  static constexpr uint32_t kSign = 0x80, kMaxFinite = 0x7B, kInf = 0x7C, kNaN = 0x7F;
  static constexpr bool kHasInf = true, kCanSaturate = true;
};

}  // namespace cast_detail

// Rounds v to nearest even in T. Out-of-range values and infinities become the largest finite
// value when `saturate` (float8 only, as ONNX specifies), else infinity (or NaN for e4m3fn,
// which has no infinity).
template <class T>
inline T small_float_from_double(double v, bool saturate) {
  using L = cast_detail::SmallFloatLayout<T>;
  const uint32_t sign = std::signbit(v) ? L::kSign : 0;
  uint32_t mag;
  if (std::isnan(v)) {
    mag = L::kNaN;
  } else {
    const bool sat = saturate && L::kCanSaturate;
    mag = std::isinf(v) ? L::kMaxFinite + 1
                        : numeric_detail::encode_magnitude<L::kMant, L::kBias>(std::fabs(v));
    if (mag > L::kMaxFinite) mag = sat ? L::kMaxFinite : (L::kHasInf ? L::kInf : L::kNaN);
  }
  T out;
  out.bits = static_cast<decltype(out.bits)>(sign | mag);
  return out;
}

// Float to integer: truncates toward zero. ONNX leaves NaN and out-of-range values undefined;
// kiln maps NaN to 0 and saturates, so results never depend on C++ undefined behaviour.
template <class To>
inline To int_from_double(double v) {
  if (std::isnan(v)) return 0;
  v = std::trunc(v);
  constexpr auto lo = std::numeric_limits<To>::lowest();
  constexpr auto hi = std::numeric_limits<To>::max();
  if (v <= static_cast<double>(lo)) return lo;
  if (v >= static_cast<double>(hi)) return hi;  // (double)hi may round up; >= catches that
  return static_cast<To>(v);
}

// One element of Cast from From to To.
template <class To, class From>
inline To cast_value(From v, bool saturate) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<To, bool>) {
    return static_cast<compute_t<From>>(v) != 0;  // NaN is nonzero, so true
  } else if constexpr (std::is_same_v<From, bool>) {
    return convert<To>(static_cast<uint8_t>(v));
  } else if constexpr (is_small_float_v<To>) {
    return small_float_from_double<To>(static_cast<double>(static_cast<compute_t<From>>(v)), saturate);
  } else if constexpr (std::is_integral_v<To> && !std::is_integral_v<From>) {
    return int_from_double<To>(static_cast<double>(static_cast<compute_t<From>>(v)));
  } else {
    return static_cast<To>(v);  // int <-> int wraps (two's complement), int/float -> float rounds
  }
}

// QuantizeLinear / DequantizeLinear kernels (cast_quant_linear.cpp), registered by
// register_cast_quant_kernels.
void register_quant_linear_kernels(KernelRegistry& r);

}  // namespace kiln::cpu
