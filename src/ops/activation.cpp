#include "ops/activation.h"

#include <array>
#include <utility>

#include "core/error.h"

namespace kiln::ops {
namespace {

constexpr std::array<std::pair<ActivationKind, const char*>, 10> kNames = {{
    {ActivationKind::kNone, ""},
    {ActivationKind::kRelu, "Relu"},
    {ActivationKind::kClip, "Clip"},
    {ActivationKind::kLeakyRelu, "LeakyRelu"},
    {ActivationKind::kSigmoid, "Sigmoid"},
    {ActivationKind::kHardSigmoid, "HardSigmoid"},
    {ActivationKind::kHardSwish, "HardSwish"},
    {ActivationKind::kSilu, "Silu"},
    {ActivationKind::kTanh, "Tanh"},
    {ActivationKind::kGelu, "Gelu"},
}};

}  // namespace

std::string activation_name(ActivationKind kind) {
  for (const auto& [k, name] : kNames) {
    if (k == kind) return name;
  }
  return "";
}

Status activation_of(const ir::Node& node, Activation* out) {
  *out = Activation{};
  const std::string name = node.attr_s("activation", "");
  const std::vector<float> params = node.attr_floats("activation_params");
  for (const auto& [k, n] : kNames) {
    if (name == n) out->kind = k;
  }
  if (out->kind == ActivationKind::kNone && !name.empty()) {
    return invalid_argument("{}: unknown fused activation '{}'", node.describe(), name);
  }
  if (params.size() > 0) out->p0 = params[0];
  if (params.size() > 1) out->p1 = params[1];
  return Status::OK();
}

void set_activation(ir::Node& node, const Activation& act) {
  ir::Attribute name;
  name.kind = ir::Attribute::Kind::kString;
  name.s = activation_name(act.kind);
  node.attrs["activation"] = name;
  ir::Attribute params;
  params.kind = ir::Attribute::Kind::kFloats;
  params.floats = {act.p0, act.p1};
  node.attrs["activation_params"] = params;
}

}  // namespace kiln::ops
