// fuse_conv_bias_activation: Conv becomes kiln.FusedConv (ops/fused_conv.cpp), which then
// swallows what follows it, in the order the fused op computes it:
//   Y = act(conv(X, W) + B + Z)
//   1. Conv -> FusedConv
//   2. Add(FusedConv, k), k a per-channel constant            -> B += k
//   3. Add(FusedConv, Z), Z of the output's exact shape       -> residual Z
//   4. act(FusedConv), act one of ops/activation.h's (x * Sigmoid(x) as Silu) -> activation
// Each step only extends a FusedConv that has none of the later parts yet: an Add after an
// activation is the next block's input, not a residual of this conv (act(x) + z is not
// act(x + z)).
//
// A ResNet residual Add often adds two conv outputs. We fuse into the one read only by the
// Add that comes later in topological order, so the other (the residual) is already computed
// when the fused conv runs and the earlier value's buffer need not wait.
#include <algorithm>

#include "passes/fusion_util.h"
#include "passes/passes.h"

namespace kiln::passes {
namespace {

constexpr const char* kFusedConv = "FusedConv";
constexpr const char* kDomain = "kiln";

bool has_activation(const ir::Node& n) { return !n.attr_s("activation", "").empty(); }
bool has_residual(const ir::Node& n) { return n.input(3) != nullptr; }
bool is_channels_last(const ir::Node& n) { return n.attr_i("channels_last", 0) != 0; }

Pattern fused_conv() { return Pattern::op(kFusedConv).in_domain(kDomain); }

bool is_fusable_conv(const ir::Node& n) {
  const ir::Value* y = n.output(0);
  return y && is_fusable_dtype(y->type.dtype);
}

bool conv_to_fused(ir::Graph& g, const Match& m) {
  const ir::Node& conv = *m.root;
  add_replacement(g, conv, kFusedConv, kDomain, conv.inputs, conv.output(0));
  return true;
}

// 2. A per-channel constant Add joins the bias (which must be absent or constant).
bool fuse_bias(ir::Graph& g, const Match& m) {
  const ir::Node& conv = *m.node("conv");
  const ir::Value* w = conv.input(1);
  const ir::Value* b = conv.input(2);
  const ir::Value* k = m.value("k");
  const ir::TensorType& y = conv.output(0)->type;
  if (!w->type.has_rank() || !y.has_rank() || !(*w->type.shape)[0].known()) return false;
  if (k->type.dtype != y.dtype || (b && !b->is_constant())) return false;
  const int64_t channels = (*w->type.shape)[0].value;
  std::vector<double> bias;
  if (!per_channel_values(*k, y.rank(), channels, &bias)) return false;
  if (b) {
    const std::vector<double> old = constant_doubles(*b);
    if (static_cast<int64_t>(old.size()) != channels) return false;
    for (size_t c = 0; c < bias.size(); ++c) bias[c] += old[c];
  }
  ir::Value* new_b = add_constant_like(g, m.root->name + "_bias", y.dtype, {channels}, bias);
  std::vector<ir::Value*> inputs = conv.inputs;
  inputs.resize(std::max<size_t>(inputs.size(), 3));
  inputs[2] = new_b;
  add_replacement(g, conv, kFusedConv, kDomain, inputs, m.root->output(0));
  return true;
}

bool same_known_shape(const ir::TensorType& a, const ir::TensorType& b) {
  if (!a.is_concrete() || !b.is_concrete()) {
    // Symbolic dims count when both name the same dim.
    if (!a.has_rank() || !b.has_rank() || a.rank() != b.rank()) return false;
    for (int i = 0; i < a.rank(); ++i) {
      const ir::Dim& x = (*a.shape)[i];
      if (!(x == (*b.shape)[i]) || (!x.known() && x.symbol.empty())) return false;
    }
    return true;
  }
  return a.concrete() == b.concrete();
}

// A FusedConv that can still take a residual, whose output `v` is read by one node only.
bool can_take_residual(const ir::Node& n) { return !has_activation(n) && !has_residual(n); }

bool is_residual_candidate(const ir::Value& v, const ir::Graph& g) {
  const ir::Node* p = v.producer;
  return p && p->op_type == kFusedConv && p->domain == kDomain && can_take_residual(*p) && has_single_use(v, g);
}

size_t position(const ir::Graph& g, const ir::Node* n) {
  const auto& nodes = g.nodes();
  return std::find_if(nodes.begin(), nodes.end(), [&](const auto& p) { return p.get() == n; }) - nodes.begin();
}

// In Add(a, b) where a and b are both residual candidates, only the later one may take the
// other as its residual.
bool is_earlier_of_two_candidates(const ir::Graph& g, const ir::Node& n) {
  const ir::Value* y = n.output(0);
  if (!y || y->consumers.size() != 1 || y->consumers[0]->op_type != "Add") return false;
  const ir::Node* add = y->consumers[0];
  const ir::Value* other = add->input(0) == y ? add->input(1) : add->input(0);
  return other && other != y && is_residual_candidate(*other, g) && position(g, other->producer) > position(g, &n);
}

// 3. Add(conv, z) -> FusedConv with residual z.
bool fuse_residual(ir::Graph& g, const Match& m) {
  const ir::Node& conv = *m.node("conv");
  ir::Value* z = m.value("z");
  const ir::Value* y = m.root->output(0);
  if (z->type.dtype != y->type.dtype || !same_known_shape(z->type, y->type) ||
      !same_known_shape(conv.output(0)->type, y->type)) {
    return false;
  }
  std::vector<ir::Value*> inputs = conv.inputs;
  inputs.resize(4);
  inputs[3] = z;
  add_replacement(g, conv, kFusedConv, kDomain, inputs, m.root->output(0));
  return true;
}

// 4. The activation goes onto a copy of the FusedConv.
bool fuse_activation(ir::Graph& g, ir::Node& conv, const ops::Activation& act, ir::Value* out) {
  ir::Node* n = add_replacement(g, conv, kFusedConv, kDomain, conv.inputs, out);
  ops::set_activation(*n, act);
  return true;
}

class FuseConvBiasActivation final : public Pass {
 public:
  std::string name() const override { return "fuse_conv_bias_activation"; }
  bool apply(ir::Graph& g, const PassContext&) override {
    auto plain = fused_conv().where([](const ir::Node& n) {
      return can_take_residual(n) && !is_channels_last(n);
    });
    auto open = fused_conv().where(
        [&g](const ir::Node& n) { return can_take_residual(n) && !is_earlier_of_two_candidates(g, n); });
    std::vector<RewriteRule> rules = {
        {"conv_to_fused_conv", Pattern::op("Conv").where(is_fusable_conv), conv_to_fused},
        {"conv_bias", Pattern::op("Add", {plain.bind("conv"), Pattern::constant().bind("k")}).commutative(),
         fuse_bias},
        {"conv_residual", Pattern::op("Add", {open.bind("conv"), Pattern::any().bind("z")}).commutative(),
         fuse_residual},
    };
    auto unactivated = fused_conv().where([](const ir::Node& n) { return !has_activation(n); });
    for (RewriteRule& r : activation_rules("conv", unactivated, fuse_activation)) rules.push_back(std::move(r));
    return apply_rules(g, rules);
  }
};

}  // namespace

std::unique_ptr<Pass> make_fuse_conv_bias_activation() { return std::make_unique<FuseConvBiasActivation>(); }

}  // namespace kiln::passes
