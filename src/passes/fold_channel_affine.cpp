// fold_channel_affine: Mul or Add by a per-output-channel constant after a Conv folds into
// the Conv's weights and bias:
//   Mul(Conv(X, W, B), k) = Conv(X, k[m] * W[m], k * B)
//   Add(Conv(X, W, B), k) = Conv(X, W, B + k)
// k is a scalar, [M, 1, 1] or [1, M, 1, 1] (any shape that varies along the channel dim only,
// see per_channel_values). W, B and k must be constants and the Conv's output read only here.
#include "passes/fusion_util.h"
#include "passes/passes.h"

namespace kiln::passes {
namespace {

bool has_constant_weights(const ir::Node& n) {
  const ir::Value* w = n.input(1);
  const ir::Value* b = n.input(2);
  return w && w->is_constant() && w->constant->rank() >= 3 && is_float_dtype(w->type.dtype) &&
         (!b || b->is_constant());
}

bool fold(ir::Graph& g, const Match& m) {
  ir::Node& conv = *m.node("conv");
  const ir::Value* w = conv.input(1);
  const ir::Value* b = conv.input(2);
  const ir::Value* k = m.value("k");
  const int64_t channels = w->constant->dim(0);
  std::vector<double> factor;
  if (k->type.dtype != w->type.dtype || !conv.output(0)->type.has_rank() ||
      !per_channel_values(*k, conv.output(0)->type.rank(), channels, &factor)) {
    return false;
  }
  std::vector<double> bias = b ? constant_doubles(*b) : std::vector<double>(static_cast<size_t>(channels), 0.0);
  if (static_cast<int64_t>(bias.size()) != channels) return false;
  ir::Value* new_w = conv.input(1);
  const bool is_mul = m.root->op_type == "Mul";
  if (is_mul) {
    std::vector<double> wv = constant_doubles(*w);
    const size_t per_channel = wv.size() / static_cast<size_t>(channels);
    for (size_t i = 0; i < wv.size(); ++i) wv[i] *= factor[i / per_channel];
    new_w = add_constant_like(g, w->name + "_scaled", w->type.dtype, w->constant->shape(), wv);
  }
  for (size_t c = 0; c < bias.size(); ++c) bias[c] = is_mul ? bias[c] * factor[c] : bias[c] + factor[c];
  // A Mul keeps an absent bias absent (0 * k = 0).
  ir::Value* new_b = is_mul && !b ? nullptr : add_constant_like(g, m.root->name + "_bias", w->type.dtype, {channels}, bias);
  add_replacement(g, conv, conv.op_type, conv.domain, {conv.input(0), new_w, new_b}, m.root->output(0));
  return true;
}

class FoldChannelAffine final : public Pass {
 public:
  std::string name() const override { return "fold_channel_affine"; }
  bool apply(ir::Graph& g, const PassContext&) override {
    auto conv = Pattern::op("Conv").where(has_constant_weights).bind("conv");
    auto affine = Pattern::any_of({"Mul", "Add"}, {conv, Pattern::constant().bind("k")}).commutative();
    return apply_rules(g, {{"channel_affine_into_conv", affine, fold}});
  }
};

}  // namespace

std::unique_ptr<Pass> make_fold_channel_affine() { return std::make_unique<FoldChannelAffine>(); }

}  // namespace kiln::passes
