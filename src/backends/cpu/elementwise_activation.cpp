// CPU kernels of the activation functions. Attributes are read once per run into the
// functor; the functor computes in the compute type C (float for fp16/bf16).
#include <cmath>

#include "backends/cpu/elementwise_kernels.h"

namespace kiln::cpu {
namespace {

struct ReluFn {
  template <class C>
  C operator()(C x) const {
    return x < C(0) ? C(0) : x;  // NaN stays NaN
  }
};

struct SigmoidFn {
  template <class C>
  C operator()(C x) const {
    // exp of a negative argument only, so large |x| neither overflows nor loses precision.
    if (x >= C(0)) return C(1) / (C(1) + std::exp(-x));
    const C e = std::exp(x);
    return e / (C(1) + e);
  }
};

struct TanhFn {
  template <class C>
  C operator()(C x) const {
    return std::tanh(x);
  }
};

struct SoftplusFn {
  template <class C>
  C operator()(C x) const {
    return x > C(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));  // log(1 + e^x), stable
  }
};

struct SoftsignFn {
  template <class C>
  C operator()(C x) const {
    return x / (C(1) + std::fabs(x));
  }
};

struct MishFn {
  template <class C>
  C operator()(C x) const {
    return x * std::tanh(SoftplusFn{}(x));
  }
};

struct LeakyReluFn {
  float alpha;
  template <class C>
  C operator()(C x) const {
    return x < C(0) ? static_cast<C>(alpha) * x : x;
  }
};

// HardSwish is HardSigmoid(alpha = 1/6, beta = 0.5) times x.
struct HardSigmoidFn {
  float alpha, beta;
  template <class C>
  C operator()(C x) const {
    const C v = static_cast<C>(alpha) * x + static_cast<C>(beta);
    return v < C(0) ? C(0) : (v > C(1) ? C(1) : v);  // NaN stays NaN
  }
};

struct HardSwishFn {
  template <class C>
  C operator()(C x) const {
    return x * HardSigmoidFn{1.0f / 6, 0.5f}(x);
  }
};

struct EluFn {
  float alpha;
  template <class C>
  C operator()(C x) const {
    return x < C(0) ? static_cast<C>(alpha) * std::expm1(x) : x;
  }
};

struct SeluFn {
  float alpha, gamma;
  template <class C>
  C operator()(C x) const {
    const C g = static_cast<C>(gamma);
    return x <= C(0) ? g * static_cast<C>(alpha) * std::expm1(x) : g * x;
  }
};

struct CeluFn {
  float alpha;
  template <class C>
  C operator()(C x) const {
    const C a = static_cast<C>(alpha);
    return x > C(0) ? x : a * std::expm1(x / a);
  }
};

struct ThresholdedReluFn {
  float alpha;
  template <class C>
  C operator()(C x) const {
    return x > static_cast<C>(alpha) ? x : C(0);
  }
};

// Integers compute in double and truncate when stored, like the ONNX reference.
struct ShrinkFn {
  float bias, lambd;
  template <class C>
  auto operator()(C x) const {
    using W = std::conditional_t<std::is_floating_point_v<C>, C, double>;
    const W v = static_cast<W>(x), b = static_cast<W>(bias), l = static_cast<W>(lambd);
    return v < -l ? v + b : (v > l ? v - b : W(0));
  }
};

struct GeluFn {
  bool tanh_approx;
  template <class C>
  C operator()(C x) const {
    if (tanh_approx) {
      const C k = static_cast<C>(0.7978845608028654);  // sqrt(2 / pi)
      return C(0.5) * x * (C(1) + std::tanh(k * (x + C(0.044715) * x * x * x)));
    }
    return C(0.5) * x * (C(1) + std::erf(x * static_cast<C>(0.7071067811865476)));  // x / sqrt(2)
  }
};

}  // namespace

void register_activation_kernels(KernelRegistry& r) {
  using Floats = IeeeFloatTypes;
  register_unary<ops::SignedNumericTypes, ReluFn>(r, "Relu");
  register_unary<Floats, SigmoidFn>(r, "Sigmoid");
  register_unary<Floats, TanhFn>(r, "Tanh");
  register_unary<Floats, SoftplusFn>(r, "Softplus");
  register_unary<Floats, SoftsignFn>(r, "Softsign");
  register_unary<Floats, MishFn>(r, "Mish");
  register_unary<Floats, HardSwishFn>(r, "HardSwish");
  register_unary<Floats>(r, "LeakyRelu", [](const ir::Node& n) { return LeakyReluFn{n.attr_f("alpha", 0.01f)}; });
  register_unary<Floats>(r, "HardSigmoid", [](const ir::Node& n) {
    return HardSigmoidFn{n.attr_f("alpha", 0.2f), n.attr_f("beta", 0.5f)};
  });
  register_unary<Floats>(r, "Elu", [](const ir::Node& n) { return EluFn{n.attr_f("alpha", 1.0f)}; });
  register_unary<Floats>(r, "Selu", [](const ir::Node& n) {
    return SeluFn{n.attr_f("alpha", 1.67326319217681884765625f), n.attr_f("gamma", 1.05070102214813232421875f)};
  });
  register_unary<Floats>(r, "Celu", [](const ir::Node& n) { return CeluFn{n.attr_f("alpha", 1.0f)}; });
  register_unary<Floats>(r, "ThresholdedRelu",
                         [](const ir::Node& n) { return ThresholdedReluFn{n.attr_f("alpha", 1.0f)}; });
  register_unary<NumericTypes>(r, "Shrink", [](const ir::Node& n) {
    return ShrinkFn{n.attr_f("bias", 0.0f), n.attr_f("lambd", 0.5f)};
  });
  register_unary<Floats>(r, "Gelu", [](const ir::Node& n) { return GeluFn{n.attr_s("approximate", "none") == "tanh"}; });
}

}  // namespace kiln::cpu
