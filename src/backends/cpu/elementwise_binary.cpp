// CPU kernels of the two-input broadcasting ops (arithmetic, comparison, logic, bitwise),
// Pow, PRelu and Where.
#include <cmath>
#include <functional>
#include <limits>

#include "backends/cpu/elementwise_kernels.h"

namespace kiln::cpu {
namespace {

// Integer arithmetic wraps (two's complement) as ONNX Runtime's does, instead of being
// undefined on signed overflow or on small types promoted to int.
template <class C, class Op>
C wrapping(C a, C b, Op op) {
  if constexpr (std::is_integral_v<C>) {
    using U = std::make_unsigned_t<std::common_type_t<C, unsigned>>;
    return static_cast<C>(op(static_cast<U>(a), static_cast<U>(b)));
  } else {
    return op(a, b);
  }
}

struct AddFn {
  template <class C>
  C operator()(C a, C b) const { return wrapping(a, b, std::plus<>{}); }
};
struct SubFn {
  template <class C>
  C operator()(C a, C b) const { return wrapping(a, b, std::minus<>{}); }
};
struct MulFn {
  template <class C>
  C operator()(C a, C b) const { return wrapping(a, b, std::multiplies<>{}); }
};

// Integer division truncates toward zero (the ONNX reference casts the true quotient back).
// Division by zero is undefined in ONNX; it gives 0 here rather than a crash.
struct DivFn {
  template <class C>
  C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>) {
      if (b == 0) return 0;
      if constexpr (std::is_signed_v<C>) {
        if (b == -1) return wrapping(C(0), a, std::minus<>{});  // MIN / -1 overflows
      }
      return static_cast<C>(a / b);
    } else {
      return a / b;
    }
  }
};

// fmod = 1: C fmod (the sign of the dividend); fmod = 0: Python's % (the sign of the divisor).
struct ModFn {
  bool c_fmod;
  template <class C>
  C operator()(C a, C b) const {
    C r;
    if constexpr (std::is_integral_v<C>) {
      if (b == 0) return 0;
      if constexpr (std::is_signed_v<C>) {
        if (b == -1) return 0;  // MIN % -1 overflows
      }
      r = static_cast<C>(a % b);
    } else {
      r = std::fmod(a, b);
    }
    if constexpr (std::is_signed_v<C> || std::is_floating_point_v<C>) {
      if (!c_fmod && r != C(0) && ((r < C(0)) != (b < C(0)))) r = static_cast<C>(r + b);
    }
    return r;
  }
};

struct EqualFn {
  template <class C>
  bool operator()(C a, C b) const { return a == b; }
};
struct LessFn {
  template <class C>
  bool operator()(C a, C b) const { return a < b; }
};
struct GreaterFn {
  template <class C>
  bool operator()(C a, C b) const { return a > b; }
};
struct LessOrEqualFn {
  template <class C>
  bool operator()(C a, C b) const { return a <= b; }
};
struct GreaterOrEqualFn {
  template <class C>
  bool operator()(C a, C b) const { return a >= b; }
};
struct AndFn {
  bool operator()(bool a, bool b) const { return a && b; }
};
struct OrFn {
  bool operator()(bool a, bool b) const { return a || b; }
};
struct XorFn {
  bool operator()(bool a, bool b) const { return a != b; }
};
struct BitwiseAndFn {
  template <class C>
  C operator()(C a, C b) const { return static_cast<C>(a & b); }
};
struct BitwiseOrFn {
  template <class C>
  C operator()(C a, C b) const { return static_cast<C>(a | b); }
};
struct BitwiseXorFn {
  template <class C>
  C operator()(C a, C b) const { return static_cast<C>(a ^ b); }
};

// Shifting by the type's width or more is undefined in C++; all bits are shifted out here.
struct BitShiftFn {
  bool left;
  template <class C>
  C operator()(C a, C b) const {
    if (b >= static_cast<C>(std::numeric_limits<C>::digits)) return 0;
    return static_cast<C>(left ? a << b : a >> b);
  }
};

struct PReluFn {
  template <class C>
  C operator()(C x, C slope) const {
    if constexpr (std::is_unsigned_v<C>) return x;
    else return x < C(0) ? static_cast<C>(slope * x) : x;
  }
};

// Integer powers are exact by repeated squaring (wrapping like multiplication); any float
// operand makes it a double pow, truncated back for integer bases as the reference does.
struct PowFn {
  template <class B, class E>
  auto operator()(B base, E exponent) const {
    if constexpr (std::is_integral_v<B> && std::is_integral_v<E>) {
      if constexpr (std::is_signed_v<E>) {
        if (exponent < 0) return static_cast<B>(base == 1 ? 1 : base == -1 ? ((exponent & 1) ? -1 : 1) : 0);
      }
      B result = 1;
      for (auto e = static_cast<std::make_unsigned_t<E>>(exponent); e != 0; e >>= 1) {
        if (e & 1) result = MulFn{}(result, base);
        base = MulFn{}(base, base);
      }
      return result;
    } else {
      return std::pow(static_cast<double>(base), static_cast<double>(exponent));
    }
  }
};

Status pow_kernel(KernelContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  Tensor& y = ctx.alloc_output(0);
  bool ok = false;
  dispatch<ops::PowBaseTypes>(a.dtype(), [&](auto base_tag) {
    using B = typename decltype(base_tag)::type;
    ok = dispatch<ops::PowExponentTypes>(b.dtype(), [&](auto exp_tag) {
      map_binary<B, B, typename decltype(exp_tag)::type>(a, b, y, PowFn{});
    });
  });
  if (!ok) return unsupported("Pow has no CPU kernel for {} ^ {}", dtype_name(a.dtype()), dtype_name(b.dtype()));
  return Status::OK();
}

Status where_kernel(KernelContext& ctx) {
  const Tensor& cond = ctx.input(0);
  const Tensor& x = ctx.input(1);
  const Tensor& other = ctx.input(2);
  Tensor& y = ctx.alloc_output(0);
  const bool ok = dispatch<AllTypes>(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const bool* pc = cond.data_as<bool>();
    const T* px = x.data_as<T>();
    const T* po = other.data_as<T>();
    T* py = y.data_as<T>();
    auto row = [&](int64_t o, const std::array<int64_t, 3>& off, const std::array<int64_t, 3>& step, int64_t n) {
      for (int64_t k = 0; k < n; ++k) {
        py[o + k] = pc[off[0] + k * step[0]] ? px[off[1] + k * step[1]] : po[off[2] + k * step[2]];
      }
    };
    for_each_broadcast_row<3>(y.shape(), {&cond.shape(), &x.shape(), &other.shape()}, row);
  });
  if (!ok) return unsupported("Where has no CPU kernel for {}", dtype_name(x.dtype()));
  return Status::OK();
}

}  // namespace

void register_binary_kernels(KernelRegistry& r) {
  register_binary<NumericTypes, AddFn>(r, "Add");
  register_binary<NumericTypes, SubFn>(r, "Sub");
  register_binary<NumericTypes, MulFn>(r, "Mul");
  register_binary<NumericTypes, DivFn>(r, "Div");
  register_binary<NumericTypes>(r, "Mod", [](const ir::Node& n) { return ModFn{n.attr_i("fmod", 0) != 0}; });
  register_binary<ops::EqualTypes, EqualFn>(r, "Equal");
  register_binary<NumericTypes, LessFn>(r, "Less");
  register_binary<NumericTypes, GreaterFn>(r, "Greater");
  register_binary<NumericTypes, LessOrEqualFn>(r, "LessOrEqual");
  register_binary<NumericTypes, GreaterOrEqualFn>(r, "GreaterOrEqual");
  register_binary<ops::BoolTypes, AndFn>(r, "And");
  register_binary<ops::BoolTypes, OrFn>(r, "Or");
  register_binary<ops::BoolTypes, XorFn>(r, "Xor");
  register_binary<IntTypes, BitwiseAndFn>(r, "BitwiseAnd");
  register_binary<IntTypes, BitwiseOrFn>(r, "BitwiseOr");
  register_binary<IntTypes, BitwiseXorFn>(r, "BitwiseXor");
  register_binary<ops::UnsignedIntTypes>(r, "BitShift",
                                         [](const ir::Node& n) { return BitShiftFn{n.attr_s("direction", "") == "LEFT"}; });
  register_binary<ops::PReluTypes, PReluFn>(r, "PRelu");
  r.add("Pow", pow_kernel);
  r.add("Where", where_kernel);
}

}  // namespace kiln::cpu
