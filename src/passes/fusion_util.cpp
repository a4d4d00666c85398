#include "passes/fusion_util.h"

#include <algorithm>
#include <limits>

#include "core/error.h"

namespace kiln::passes {

bool is_fusable_dtype(DType t) { return t == DType::kFloat32 || t == DType::kFloat16 || t == DType::kBFloat16; }

bool is_float_dtype(DType t) { return is_fusable_dtype(t) || t == DType::kFloat64; }

std::vector<double> constant_doubles(const ir::Value& v) {
  KILN_ASSERT(v.is_constant(), "'{}' is not a constant", v.name);
  const Tensor t = v.constant->to(DType::kFloat64);
  const double* p = t.data_as<double>();
  return {p, p + t.numel()};
}

ir::Value* add_constant_like(ir::Graph& g, const std::string& name, DType dtype, std::vector<int64_t> shape,
                             const std::vector<double>& values) {
  Tensor t(DType::kFloat64, std::move(shape));
  KILN_ASSERT(static_cast<size_t>(t.numel()) == values.size(), "constant '{}': {} values for {} elements", name,
              values.size(), t.numel());
  std::copy(values.begin(), values.end(), t.data_as<double>());
  return g.add_constant(name, dtype == DType::kFloat64 ? t : t.to(dtype));
}

bool per_channel_values(const ir::Value& k, int rank, int64_t channels, std::vector<double>* out) {
  if (!k.is_constant() || rank < 2) return false;
  const std::vector<int64_t>& shape = k.constant->shape();
  const int kr = static_cast<int>(shape.size());
  if (kr > rank) return false;
  bool varies = false;  // along the channel dim
  for (int i = 0; i < kr; ++i) {
    const int axis = rank - kr + i;  // k's dim i aligned to the right of the tensor
    if (axis == 1 && shape[i] == channels) {
      varies = true;
    } else if (shape[i] != 1) {
      return false;
    }
  }
  const std::vector<double> v = constant_doubles(k);
  out->assign(static_cast<size_t>(channels), v.empty() ? 0.0 : v[0]);
  if (varies) *out = v;
  return true;
}

ir::Node* add_replacement(ir::Graph& g, const ir::Node& src, const std::string& op_type, const std::string& domain,
                          std::vector<ir::Value*> inputs, ir::Value* replaced) {
  while (!inputs.empty() && !inputs.back()) inputs.pop_back();  // omitted trailing optionals
  ir::Value* out = g.add_value(replaced->name, replaced->type);
  ir::Node* n = g.add_node(op_type, std::move(inputs), {out}, src.name);
  n->domain = domain;
  n->opset = domain == src.domain ? src.opset : 1;
  n->attrs = src.attrs;
  replace_value(g, replaced, out);
  return n;
}

void set_float_attr(ir::Node& n, const std::string& name, float v) {
  ir::Attribute a;
  a.kind = ir::Attribute::Kind::kFloat;
  a.f = v;
  n.attrs[name] = a;
}

namespace {

// Clip's bound in input `slot`: absent is unbounded; a non-constant bound cannot be fused.
bool clip_bound(const ir::Node& n, size_t slot, float unbounded, float* out) {
  const ir::Value* v = n.input(slot);
  if (!v) {
    *out = unbounded;
    return true;
  }
  if (!v->is_constant() || v->constant->numel() != 1) return false;
  *out = static_cast<float>(constant_doubles(*v)[0]);
  return true;
}

}  // namespace

bool activation_of_node(const ir::Node& n, ops::Activation* out) {
  using K = ops::ActivationKind;
  *out = ops::Activation{};
  if (!n.domain.empty()) return false;
  const std::string& op = n.op_type;
  if (op == "Relu") {
    out->kind = K::kRelu;
  } else if (op == "Clip") {
    out->kind = K::kClip;
    constexpr float inf = std::numeric_limits<float>::infinity();
    return clip_bound(n, 1, -inf, &out->p0) && clip_bound(n, 2, inf, &out->p1);
  } else if (op == "LeakyRelu") {
    *out = {K::kLeakyRelu, n.attr_f("alpha", 0.01f), 0};
  } else if (op == "Sigmoid") {
    out->kind = K::kSigmoid;
  } else if (op == "HardSigmoid") {
    *out = {K::kHardSigmoid, n.attr_f("alpha", 0.2f), n.attr_f("beta", 0.5f)};
  } else if (op == "HardSwish") {
    out->kind = K::kHardSwish;
  } else if (op == "Tanh") {
    out->kind = K::kTanh;
  } else if (op == "Gelu") {
    *out = {K::kGelu, n.attr_s("approximate", "none") == "tanh" ? 1.0f : 0.0f, 0};
  } else {
    return false;
  }
  return true;
}

std::vector<RewriteRule> activation_rules(const std::string& prefix, const Pattern& producer, FuseActivation fuse) {
  std::vector<RewriteRule> rules;
  Pattern p = producer;
  p.bind("producer");
  auto act_node = Pattern::any_of({"Relu", "Clip", "LeakyRelu", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Gelu"},
                                  {p});
  rules.push_back({prefix + "_activation", act_node, [fuse](ir::Graph& g, const Match& m) {
                     ops::Activation act;
                     if (!activation_of_node(*m.root, &act)) return false;
                     return fuse(g, *m.node("producer"), act, m.root->output(0));
                   }});
  // x * Sigmoid(x): x has exactly these two readers.
  Pattern shared = p;
  shared.allow_shared();
  auto silu = Pattern::op("Mul", {shared, Pattern::op("Sigmoid", {Pattern::any().bind("producer")})}).commutative();
  rules.push_back({prefix + "_silu", silu, [fuse](ir::Graph& g, const Match& m) {
                     const ir::Value* x = m.value("producer");
                     if (x->consumers.size() != 2 || is_graph_output(*x, g)) return false;
                     return fuse(g, *m.node("producer"), {ops::ActivationKind::kSilu, 0, 0}, m.root->output(0));
                   }});
  return rules;
}

void replace_input(ir::Node* n, size_t slot, ir::Value* to) {
  ir::Value* from = n->inputs[slot];
  if (from) {
    auto it = std::find(from->consumers.begin(), from->consumers.end(), n);
    KILN_ASSERT(it != from->consumers.end(), "{} is not a reader of '{}'", n->describe(), from->name);
    from->consumers.erase(it);
  }
  n->inputs[slot] = to;
  if (to) to->consumers.push_back(n);
}

}  // namespace kiln::passes
