// fuse_layernorm: layer normalization as exporters spell it out over the last k axes,
//   d = x - ReduceMean(x);  v = ReduceMean(d^2) (Pow(d, 2) or d*d);  y = d / Sqrt(v + eps)
//   [y = y * gamma] [y = y + beta]              (gamma, beta constants)
// becomes LayerNormalization(x, gamma, beta, axis=-k, epsilon=eps) (opset 17 semantics).
// The rule is rooted at the Div; the optional affine tail is followed downstream from it.
// Scale and bias are materialized at the normalized shape (ones/zeros when absent), so the
// fused node has the plain form every backend handles; that needs the normalized dims known.
#include <algorithm>

#include "passes/matcher.h"
#include "passes/passes.h"
#include "passes/pattern_util.h"

namespace kiln::passes {
namespace {

// The normalization core, rooted at the Div, with `square` computing d^2.
Pattern core_pattern(Pattern square) {
  const Pattern centered = Pattern::op("Sub", {Pattern::any().bind("x"), Pattern::op("ReduceMean", {Pattern::any().bind("x")}).bind("mean")})
                               .allow_shared()
                               .bind("d");
  const Pattern variance = Pattern::op("ReduceMean", {std::move(square)}).bind("var");
  Pattern denom = Pattern::op("Sqrt", {Pattern::op("Add", {variance, Pattern::constant().bind("eps")}).commutative()});
  return Pattern::op("Div", {centered, std::move(denom)});
}

// `c` broadcast to `norm` (the last norm.size() dims of a rank-`rank` input), or nullopt when
// it would broadcast over the leading axes too. Element type `dtype`.
std::optional<Tensor> expand_param(const Tensor& c, const std::vector<int64_t>& norm, int rank, DType dtype) {
  const int k = static_cast<int>(norm.size());
  if (c.rank() > rank) return std::nullopt;
  const int lead = c.rank() - k;  // dims of c in front of the normalized ones (all must be 1)
  for (int j = 0; j < c.rank(); ++j) {
    const int64_t want = j < lead ? 1 : norm[j - lead];
    if (c.dim(j) != 1 && c.dim(j) != want) return std::nullopt;
  }
  const Tensor src = c.to(DType::kFloat64);
  Tensor out(DType::kFloat64, norm);
  for (int64_t i = 0; i < out.numel(); ++i) {
    // Row-major index i over `norm`, mapped onto c's (right-aligned, size-1-broadcast) dims.
    int64_t rest = i, src_index = 0, stride = 1;
    for (int a = k - 1; a >= 0; --a) {
      const int64_t coord = rest % norm[a];
      rest /= norm[a];
      const int j = a + lead;
      if (j < 0) continue;
      if (c.dim(j) != 1) src_index += coord * stride;
      stride *= c.dim(j);
    }
    out.data_as<double>()[i] = src.data_as<double>()[src_index];
  }
  return out.to(dtype);
}

Tensor filled(double value, const std::vector<int64_t>& shape, DType dtype) {
  Tensor t(DType::kFloat64, shape);
  std::fill(t.data_as<double>(), t.data_as<double>() + t.numel(), value);
  return t.to(dtype);
}

// Follows `v` to its single reader when that is `op_type`(v, constant) (either order);
// returns the reader and sets `*param` to the constant.
ir::Node* affine_reader(const ir::Graph& g, ir::Value* v, const std::string& op_type, const Tensor** param) {
  if (!has_single_use(*v, g)) return nullptr;
  ir::Node* r = v->consumers[0];
  if (r->op_type != op_type || !r->domain.empty() || r->inputs.size() != 2) return nullptr;
  const ir::Value* other = r->input(0) == v ? r->input(1) : r->input(0);
  if (!other || other == v || !other->constant) return nullptr;
  *param = &*other->constant;
  return r;
}

bool rewrite(ir::Graph& g, const Match& m) {
  ir::Value* x = m.value("x");
  const int rank = x->type.rank();
  const DType dtype = x->type.dtype;
  if (dtype != DType::kFloat32 && dtype != DType::kFloat16 && dtype != DType::kBFloat16 && dtype != DType::kFloat64) return false;
  std::vector<int64_t> axes, var_axes;
  const ir::Node& mean = *m.node("mean");
  const ir::Node& var = *m.node("var");
  if (!pattern::keeps_dims(mean) || !pattern::keeps_dims(var)) return false;
  if (!pattern::reduce_axes(mean, rank, &axes) || !pattern::reduce_axes(var, rank, &var_axes)) return false;
  if (axes != var_axes || !pattern::are_trailing(axes, rank)) return false;
  const auto eps = pattern::scalar_constant(m.value("eps"));
  if (!eps) return false;
  // d feeds the square and the Div only, so it dies with the fusion.
  if (!pattern::only_read_by(*m.value("d"), m.matched_nodes, g)) return false;

  const int k = static_cast<int>(axes.size());
  std::vector<int64_t> norm;
  for (int a = rank - k; a < rank; ++a) {
    const ir::Dim& d = (*x->type.shape)[a];
    if (!d.known()) return false;
    norm.push_back(d.value);
  }
  // The optional affine tail: Mul by gamma, then Add of beta.
  ir::Value* out = m.root->output(0);
  std::optional<Tensor> scale = filled(1.0, norm, dtype), bias = filled(0.0, norm, dtype);
  std::vector<ir::Node*> tail;  // followed nodes, which apply_rules does not know to remove
  const Tensor* param = nullptr;
  if (ir::Node* mul = affine_reader(g, out, "Mul", &param)) {
    if (auto s = expand_param(*param, norm, rank, dtype)) {
      scale = std::move(s);
      out = mul->output(0);
      tail.push_back(mul);
    }
  }
  if (ir::Node* add = affine_reader(g, out, "Add", &param)) {
    if (auto b = expand_param(*param, norm, rank, dtype)) {
      bias = std::move(b);
      out = add->output(0);
      tail.push_back(add);
    }
  }
  ir::Value* scale_v = g.add_constant(x->name + "_ln_scale", std::move(*scale));
  ir::Value* bias_v = g.add_constant(x->name + "_ln_bias", std::move(*bias));
  ir::Node* ln = pattern::replace_with_node(g, out, "LayerNormalization", {x, scale_v, bias_v}, 17);
  ln->attrs["axis"] = pattern::int_attr(-k);
  ln->attrs["epsilon"] = pattern::float_attr(static_cast<float>(*eps));
  // Last first: each is dead once its reader is gone, and the Div must lose its reader so the
  // rule cannot match it again.
  for (auto it = tail.rbegin(); it != tail.rend(); ++it) g.remove_node(*it);
  return true;
}

class FuseLayerNorm final : public Pass {
 public:
  std::string name() const override { return "fuse_layernorm"; }
  bool apply(ir::Graph& g, const PassContext&) override {
    const Pattern pow = Pattern::op("Pow", {Pattern::any().bind("d"), pattern::scalar_near(2.0)});
    const Pattern self_mul = Pattern::op("Mul", {Pattern::any().bind("d"), Pattern::any().bind("d")});
    const std::vector<RewriteRule> rules = {{"layernorm_pow", core_pattern(pow), rewrite},
                                            {"layernorm_mul", core_pattern(self_mul), rewrite}};
    if (!apply_rules(g, rules)) return false;
    // The shared d, the first mean and a followed affine tail outlive apply_rules' sweep.
    remove_dead_nodes(g);
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> make_fuse_layernorm() { return std::make_unique<FuseLayerNorm>(); }

}  // namespace kiln::passes
