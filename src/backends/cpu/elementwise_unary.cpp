// CPU kernels of the one-input elementwise math ops and Clip.
#include <cmath>
#include <limits>

#include "backends/cpu/elementwise_kernels.h"

namespace kiln::cpu {
namespace {

// A stateless functor evaluating `expr` on the compute value x.
#define KILN_UNARY_FN(Name, expr)                 \
  struct Name {                                   \
    template <class C>                            \
    auto operator()(C x) const {                  \
      return expr;                                \
    }                                             \
  }

KILN_UNARY_FN(SqrtFn, std::sqrt(x));
KILN_UNARY_FN(ExpFn, std::exp(x));
KILN_UNARY_FN(LogFn, std::log(x));
KILN_UNARY_FN(ReciprocalFn, C(1) / x);
KILN_UNARY_FN(FloorFn, std::floor(x));
KILN_UNARY_FN(CeilFn, std::ceil(x));
KILN_UNARY_FN(RoundFn, std::nearbyint(x));  // the default rounding mode rounds halves to even
KILN_UNARY_FN(SinFn, std::sin(x));
KILN_UNARY_FN(CosFn, std::cos(x));
KILN_UNARY_FN(TanFn, std::tan(x));
KILN_UNARY_FN(AsinFn, std::asin(x));
KILN_UNARY_FN(AcosFn, std::acos(x));
KILN_UNARY_FN(AtanFn, std::atan(x));
KILN_UNARY_FN(SinhFn, std::sinh(x));
KILN_UNARY_FN(CoshFn, std::cosh(x));
KILN_UNARY_FN(AsinhFn, std::asinh(x));
KILN_UNARY_FN(AcoshFn, std::acosh(x));
KILN_UNARY_FN(AtanhFn, std::atanh(x));
KILN_UNARY_FN(ErfFn, std::erf(x));  // integers go through the double overload
KILN_UNARY_FN(NegFn, -x);
KILN_UNARY_FN(NotFn, !x);
KILN_UNARY_FN(BitwiseNotFn, static_cast<C>(~x));
KILN_UNARY_FN(IsNaNFn, std::isnan(x));
#undef KILN_UNARY_FN

struct AbsFn {
  template <class C>
  C operator()(C x) const {
    if constexpr (std::is_floating_point_v<C>) return std::fabs(x);
    else if constexpr (std::is_unsigned_v<C>) return x;
    else return static_cast<C>(x < 0 ? -x : x);
  }
};

struct SignFn {
  template <class C>
  C operator()(C x) const {
    if constexpr (std::is_floating_point_v<C>) {
      if (std::isnan(x)) return x;
    }
    return static_cast<C>((C(0) < x) - (x < C(0)));
  }
};

struct IsInfFn {
  bool negative = true, positive = true;
  template <class C>
  bool operator()(C x) const {
    return std::isinf(x) && (x > 0 ? positive : negative);
  }
};

// Reads a one-element bound of any numeric dtype as T; `fallback` when absent.
template <class T>
T clip_bound(const KernelContext& ctx, int i, T fallback) {
  if (!ctx.has_input(i)) return fallback;
  const Tensor& b = ctx.input(i);
  KILN_ASSERT(b.numel() == 1, "Clip bound {} has {} elements", i, b.numel());
  T v = fallback;
  dispatch<NumericTypes>(b.dtype(), [&](auto tag) { v = convert<T>(*b.data_as<typename decltype(tag)::type>()); });
  return v;
}

Status clip_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.alloc_output(0);
  const bool ok = dispatch<NumericTypes>(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    // Small floats clamp in float; their limits are the float ones (infinity is fine too).
    const C lo = static_cast<C>(clip_bound<T>(ctx, 1, convert<T>(std::numeric_limits<C>::lowest())));
    const C hi = static_cast<C>(clip_bound<T>(ctx, 2, convert<T>(std::numeric_limits<C>::max())));
    // Written so NaN passes through and min > max gives max, as the spec says.
    map_unary<T>(x, y, [lo, hi](C v) {
      const C above_lo = v < lo ? lo : v;
      return hi < above_lo ? hi : above_lo;
    });
  });
  if (!ok) return unsupported("Clip has no CPU kernel for {}", dtype_name(x.dtype()));
  return Status::OK();
}

}  // namespace

void register_unary_kernels(KernelRegistry& r) {
  using ops::BoolTypes;
  using ops::IsNaNTypes;
  using ops::SignedNumericTypes;
  register_unary<IeeeFloatTypes, SqrtFn>(r, "Sqrt");
  register_unary<IeeeFloatTypes, ExpFn>(r, "Exp");
  register_unary<IeeeFloatTypes, LogFn>(r, "Log");
  register_unary<IeeeFloatTypes, ReciprocalFn>(r, "Reciprocal");
  register_unary<IeeeFloatTypes, FloorFn>(r, "Floor");
  register_unary<IeeeFloatTypes, CeilFn>(r, "Ceil");
  register_unary<IeeeFloatTypes, RoundFn>(r, "Round");
  register_unary<IeeeFloatTypes, SinFn>(r, "Sin");
  register_unary<IeeeFloatTypes, CosFn>(r, "Cos");
  register_unary<IeeeFloatTypes, TanFn>(r, "Tan");
  register_unary<IeeeFloatTypes, AsinFn>(r, "Asin");
  register_unary<IeeeFloatTypes, AcosFn>(r, "Acos");
  register_unary<IeeeFloatTypes, AtanFn>(r, "Atan");
  register_unary<IeeeFloatTypes, SinhFn>(r, "Sinh");
  register_unary<IeeeFloatTypes, CoshFn>(r, "Cosh");
  register_unary<IeeeFloatTypes, AsinhFn>(r, "Asinh");
  register_unary<IeeeFloatTypes, AcoshFn>(r, "Acosh");
  register_unary<IeeeFloatTypes, AtanhFn>(r, "Atanh");
  register_unary<NumericTypes, AbsFn>(r, "Abs");
  register_unary<NumericTypes, SignFn>(r, "Sign");
  register_unary<NumericTypes, ErfFn>(r, "Erf");
  register_unary<SignedNumericTypes, NegFn>(r, "Neg");
  register_unary<BoolTypes, NotFn>(r, "Not");
  register_unary<IntTypes, BitwiseNotFn>(r, "BitwiseNot");
  register_unary<IsNaNTypes, IsNaNFn>(r, "IsNaN");
  register_unary<IsNaNTypes>(r, "IsInf", [](const ir::Node& n) {
    return IsInfFn{n.attr_i("detect_negative", 1) != 0, n.attr_i("detect_positive", 1) != 0};
  });
  r.add("Clip", clip_kernel);
}

}  // namespace kiln::cpu
