// Device semantics of each EwOp, written once: ew_apply<OP>(a, b, params) in the compute type
// C (float for fp16/bf16). Formulas follow the CPU reference (backends/cpu/elementwise_*.cpp)
// so the backends agree to rounding; comments note where they differ.
#pragma once
#include <type_traits>

#include "backends/gpu/kernels/device_types.cuh"
#include "backends/gpu/kernels/ew_ops.h"

namespace kiln::gpu::kern {

// Integer + - * wrap (two's complement) like the CPU backend, instead of signed-overflow UB.
template <class C, class F>
__device__ __forceinline__ C wrap(C a, C b, F f) {
  if constexpr (std::is_integral_v<C>) {
    using U = std::make_unsigned_t<C>;
    return static_cast<C>(f(static_cast<U>(a), static_cast<U>(b)));
  } else {
    return f(a, b);
  }
}

template <class C>
__device__ __forceinline__ bool is_nan(C v) {
  if constexpr (std::is_floating_point_v<C>) return v != v;
  else return false;
}

template <class C>
__device__ __forceinline__ C sigmoid(C x) {
  if (x >= C(0)) return C(1) / (C(1) + exp(-x));
  const C e = exp(x);
  return e / (C(1) + e);
}

template <class C>
__device__ __forceinline__ C softplus(C x) {
  return x > C(0) ? x + log1p(exp(-x)) : log1p(exp(x));
}

template <EwOp OP, class C>
__device__ __forceinline__ auto ew_apply(C a, C b, const EwParams& p) {
  constexpr bool kInt = std::is_integral_v<C>;
  if constexpr (OP == EwOp::kIdentity) return a;
  else if constexpr (OP == EwOp::kRelu) return a < C(0) ? C(0) : a;  // NaN stays NaN
  else if constexpr (OP == EwOp::kAbs) {
    if constexpr (kInt) return a < C(0) ? wrap(C(0), a, [](auto x, auto y) { return x - y; }) : a;
    else return fabs(a);
  }
  else if constexpr (OP == EwOp::kNeg) {
    if constexpr (kInt) return wrap(C(0), a, [](auto x, auto y) { return x - y; });
    else return -a;
  }
  else if constexpr (OP == EwOp::kSign) return is_nan(a) ? a : static_cast<C>((C(0) < a) - (a < C(0)));
  else if constexpr (OP == EwOp::kClip) {  // NaN passes; min > max gives max (spec)
    const C above = a < static_cast<C>(p.p0) ? static_cast<C>(p.p0) : a;
    return static_cast<C>(p.p1) < above ? static_cast<C>(p.p1) : above;
  }
  else if constexpr (OP == EwOp::kNot) return !a;
  else if constexpr (OP == EwOp::kSigmoid) return sigmoid(a);
  else if constexpr (OP == EwOp::kTanh) return tanh(a);
  else if constexpr (OP == EwOp::kExp) return exp(a);
  else if constexpr (OP == EwOp::kLog) return log(a);
  else if constexpr (OP == EwOp::kSqrt) return sqrt(a);
  else if constexpr (OP == EwOp::kErf) return erf(a);
  else if constexpr (OP == EwOp::kReciprocal) return C(1) / a;
  else if constexpr (OP == EwOp::kFloor) return floor(a);
  else if constexpr (OP == EwOp::kCeil) return ceil(a);
  else if constexpr (OP == EwOp::kRound) return rint(a);  // half to even, like std::nearbyint
  else if constexpr (OP == EwOp::kSin) return sin(a);
  else if constexpr (OP == EwOp::kCos) return cos(a);
  else if constexpr (OP == EwOp::kLeakyRelu) return a < C(0) ? static_cast<C>(p.p0) * a : a;
  else if constexpr (OP == EwOp::kElu) return a < C(0) ? static_cast<C>(p.p0) * expm1(a) : a;
  else if constexpr (OP == EwOp::kSelu) {
    const C g = static_cast<C>(p.p1);
    return a <= C(0) ? g * static_cast<C>(p.p0) * expm1(a) : g * a;
  }
  else if constexpr (OP == EwOp::kCelu) {
    const C al = static_cast<C>(p.p0);
    return a > C(0) ? a : al * expm1(a / al);
  }
  else if constexpr (OP == EwOp::kHardSigmoid) {
    const C v = static_cast<C>(p.p0) * a + static_cast<C>(p.p1);
    return v < C(0) ? C(0) : (v > C(1) ? C(1) : v);
  }
  else if constexpr (OP == EwOp::kHardSwish) {
    const C v = C(1.0f / 6) * a + C(0.5f);
    return a * (v < C(0) ? C(0) : (v > C(1) ? C(1) : v));
  }
  else if constexpr (OP == EwOp::kSoftplus) return softplus(a);
  else if constexpr (OP == EwOp::kSoftsign) return a / (C(1) + fabs(a));
  else if constexpr (OP == EwOp::kMish) return a * tanh(softplus(a));
  else if constexpr (OP == EwOp::kGelu) return C(0.5) * a * (C(1) + erf(a * C(0.7071067811865476)));
  else if constexpr (OP == EwOp::kGeluTanh) {
    const C k = C(0.7978845608028654);
    return C(0.5) * a * (C(1) + tanh(k * (a + C(0.044715) * a * a * a)));
  }
  // The CPU computes Swish in double; float here (differs by at most an ulp or two).
  else if constexpr (OP == EwOp::kSwish) return a / (C(1) + exp(-static_cast<C>(p.p0) * a));
  else if constexpr (OP == EwOp::kThresholdedRelu) return a > static_cast<C>(p.p0) ? a : C(0);
  else if constexpr (OP == EwOp::kAdd) return wrap(a, b, [](auto x, auto y) { return x + y; });
  else if constexpr (OP == EwOp::kSub) return wrap(a, b, [](auto x, auto y) { return x - y; });
  else if constexpr (OP == EwOp::kMul) return wrap(a, b, [](auto x, auto y) { return x * y; });
  else if constexpr (OP == EwOp::kDiv) {
    if constexpr (kInt) {  // truncates; x/0 gives 0 and MIN/-1 wraps, as on the CPU
      if (b == 0) return C(0);
      if (b == -1) return wrap(C(0), a, [](auto x, auto y) { return x - y; });
      return static_cast<C>(a / b);
    } else {
      return a / b;
    }
  }
  // The CPU computes float Pow in double; float here (within an ulp or two).
  else if constexpr (OP == EwOp::kPow) return pow(a, b);
  else if constexpr (OP == EwOp::kMax) return is_nan(a) || a > b ? a : b;  // NaN wins (numpy)
  else if constexpr (OP == EwOp::kMin) return is_nan(a) || a < b ? a : b;
  else if constexpr (OP == EwOp::kPRelu) return a < C(0) ? static_cast<C>(b * a) : a;
  else if constexpr (OP == EwOp::kEqual) return a == b;
  else if constexpr (OP == EwOp::kLess) return a < b;
  else if constexpr (OP == EwOp::kGreater) return a > b;
  else if constexpr (OP == EwOp::kLessOrEqual) return a <= b;
  else if constexpr (OP == EwOp::kGreaterOrEqual) return a >= b;
  else if constexpr (OP == EwOp::kAnd) return a && b;
  else if constexpr (OP == EwOp::kOr) return a || b;
  else if constexpr (OP == EwOp::kXor) return a != b;
  else static_assert(OP == EwOp::kIdentity, "op has no ew_apply");
}

}  // namespace kiln::gpu::kern
