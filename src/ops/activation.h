// The activations a fused node (kiln.FusedConv, kiln.FusedGemm) can apply to its result,
// and how they are stored on the node: attribute "activation" (the ONNX op name, "" for none)
// and "activation_params" (floats, the op's attributes in the order below). One definition
// so the fusion passes, the CPU reference and the GPU epilogues agree.
//
//   Relu                    max(x, 0)
//   Clip       [min, max]   min(max(x, min), max)        (ReLU6 is Clip [0, 6])
//   LeakyRelu  [alpha]      x >= 0 ? x : alpha * x
//   Sigmoid                 1 / (1 + exp(-x))
//   HardSigmoid [alpha, beta] max(0, min(1, alpha * x + beta))
//   HardSwish               x * max(0, min(1, x / 6 + 0.5))
//   Silu                    x * sigmoid(x)               (PyTorch's SiLU / ONNX Swish with alpha 1)
//   Tanh                    tanh(x)
//   Gelu       [tanh?]      0.5 x (1 + erf(x / sqrt 2)); params [1] selects the tanh approximation
#pragma once
#include <cmath>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "kiln/status.h"

namespace kiln::ops {

enum class ActivationKind { kNone, kRelu, kClip, kLeakyRelu, kSigmoid, kHardSigmoid, kHardSwish, kSilu, kTanh, kGelu };

struct Activation {
  ActivationKind kind = ActivationKind::kNone;
  float p0 = 0, p1 = 0;  // parameters, as listed above

  // Applies the activation in float (the CPU reference computes fused epilogues in float
  // for every input type, as a GPU epilogue does).
  float apply(float x) const {
    switch (kind) {
      case ActivationKind::kNone: return x;
      case ActivationKind::kRelu: return x > 0 ? x : 0.0f;
      case ActivationKind::kClip: return x < p0 ? p0 : (x > p1 ? p1 : x);
      case ActivationKind::kLeakyRelu: return x >= 0 ? x : p0 * x;
      case ActivationKind::kSigmoid: return 1.0f / (1.0f + std::exp(-x));
      case ActivationKind::kHardSigmoid: return std::fmax(0.0f, std::fmin(1.0f, p0 * x + p1));
      case ActivationKind::kHardSwish: return x * std::fmax(0.0f, std::fmin(1.0f, x / 6.0f + 0.5f));
      case ActivationKind::kSilu: return x / (1.0f + std::exp(-x));
      case ActivationKind::kTanh: return std::tanh(x);
      case ActivationKind::kGelu:
        if (p0 != 0) {
          constexpr float kSqrt2OverPi = 0.7978845608028654f;
          return 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * (x + 0.044715f * x * x * x)));
        }
        return 0.5f * x * (1.0f + std::erf(x * 0.7071067811865476f));
    }
    return x;
  }
};

// Reads the activation attributes of a fused node; an unknown name is kInvalidArgument.
Status activation_of(const ir::Node& node, Activation* out);
// The name stored in "activation" for a kind ("" for none).
std::string activation_name(ActivationKind kind);
// Sets "activation"/"activation_params" on a node.
void set_activation(ir::Node& node, const Activation& act);

}  // namespace kiln::ops
