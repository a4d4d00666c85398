// fold_shape_computations: Shape and Size of values whose dims are statically known become
// constants; where some dims are dynamic, a Gather or Slice of a Shape that picks only known
// dims does. Exporters' Shape -> Gather -> Unsqueeze -> Concat -> Reshape chains then fold
// (constant_folding, which runs next, does the rest). Dynamic dims stay computed.
#include <algorithm>
#include <limits>

#include "ops/shape_util.h"
#include "passes/cleanup_util.h"
#include "passes/matcher.h"
#include "passes/passes.h"

namespace kiln::passes {
namespace {

// The dims a Shape node returns (its start/end window of the input's dims); false when the
// input's rank is unknown.
bool shape_dims(const ir::Node& shape, std::vector<ir::Dim>* dims) {
  const ir::Value* x = shape.input(0);
  if (!x || !x->type.has_rank()) return false;
  const int64_t rank = x->type.rank();
  auto clamp_index = [&](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
  const int64_t start = clamp_index(shape.attr_i("start", 0));
  const int64_t end = clamp_index(shape.attr_i("end", rank));
  dims->assign(x->type.shape->begin() + start, x->type.shape->begin() + std::max(start, end));
  return true;
}

// The values of `dims` at `picks` as an int64 tensor of `shape`; false if one is not known.
bool known_dims_tensor(const std::vector<ir::Dim>& dims, const std::vector<int64_t>& picks,
                       std::vector<int64_t> shape, Tensor* out) {
  std::vector<int64_t> values;
  for (int64_t i : picks) {
    if (i < 0 || i >= static_cast<int64_t>(dims.size()) || !dims[i].known()) return false;
    values.push_back(dims[i].value);
  }
  *out = ops::ints_to_tensor(values).reshaped(std::move(shape));
  return true;
}

bool replace_root(ir::Graph& g, const Match& m, Tensor t) {
  replace_with_constant(g, m.root->output(0), std::move(t));
  return true;
}

bool fold_shape(ir::Graph& g, const Match& m) {
  std::vector<ir::Dim> dims;
  if (!is_used(*m.root->output(0), g) || !shape_dims(*m.root, &dims)) return false;
  std::vector<int64_t> all(dims.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int64_t>(i);
  Tensor t;
  return known_dims_tensor(dims, all, {static_cast<int64_t>(dims.size())}, &t) && replace_root(g, m, t);
}

bool fold_size(ir::Graph& g, const Match& m) {
  const ir::Value* x = m.root->input(0);
  if (!is_used(*m.root->output(0), g) || !x || !x->type.is_concrete()) return false;
  return replace_root(g, m, ops::ints_to_tensor({Tensor::numel_of(x->type.concrete())}).reshaped({}));
}

// Gather(Shape(x), constant indices) along axis 0.
bool fold_gather_of_shape(ir::Graph& g, const Match& m) {
  std::vector<ir::Dim> dims;
  std::vector<int64_t> picks;
  const int64_t axis = m.root->attr_i("axis", 0);
  if (!is_used(*m.root->output(0), g) || (axis != 0 && axis != -1) || !shape_dims(*m.node("shape"), &dims) ||
      !constant_ints(m.value("indices"), &picks)) {
    return false;
  }
  for (int64_t& i : picks) i += i < 0 ? static_cast<int64_t>(dims.size()) : 0;
  Tensor t;
  return known_dims_tensor(dims, picks, m.value("indices")->constant->shape(), &t) && replace_root(g, m, t);
}

// The positions a one-axis Slice with (start, end, step) selects from `n` elements (ONNX
// clamping rules).
std::vector<int64_t> slice_positions(int64_t n, int64_t start, int64_t end, int64_t step) {
  if (n == 0) return {};
  if (start < 0) start += n;
  if (end < 0) end += n;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, n);
    end = std::clamp<int64_t>(end, 0, n);
  } else {
    start = std::clamp<int64_t>(start, 0, n - 1);
    end = std::clamp<int64_t>(end, -1, n - 1);
  }
  std::vector<int64_t> picks;
  for (int64_t i = start; step > 0 ? i < end : i > end; i += step) picks.push_back(i);
  return picks;
}

// Slice(Shape(x), constant starts, ends[, axes][, steps]).
bool fold_slice_of_shape(ir::Graph& g, const Match& m) {
  const ir::Node& s = *m.root;
  std::vector<ir::Dim> dims;
  std::vector<int64_t> starts, ends, axes{0}, steps{1};
  if (!is_used(*s.output(0), g) || !shape_dims(*m.node("shape"), &dims) || !constant_ints(s.input(1), &starts) ||
      !constant_ints(s.input(2), &ends) || (s.input(3) && !constant_ints(s.input(3), &axes)) ||
      (s.input(4) && !constant_ints(s.input(4), &steps))) {
    return false;
  }
  if (starts.size() != 1 || ends.size() != 1 || axes.size() != 1 || steps.size() != 1) return false;
  if ((axes[0] != 0 && axes[0] != -1) || steps[0] == 0) return false;
  const std::vector<int64_t> picks = slice_positions(static_cast<int64_t>(dims.size()), starts[0], ends[0], steps[0]);
  Tensor t;
  return known_dims_tensor(dims, picks, {static_cast<int64_t>(picks.size())}, &t) && replace_root(g, m, t);
}

std::vector<RewriteRule> shape_rules() {
  auto shape = [] { return Pattern::op("Shape").allow_shared().bind("shape"); };
  return {
      {"static_shape", Pattern::op("Shape"), fold_shape},
      {"static_size", Pattern::op("Size"), fold_size},
      {"gather_static_dims", Pattern::op("Gather", {shape(), Pattern::constant().bind("indices")}),
       fold_gather_of_shape},
      {"slice_static_dims", Pattern::op("Slice", {shape(), Pattern::constant(), Pattern::constant()}),
       fold_slice_of_shape},
  };
}

class FoldShapeComputations final : public Pass {
 public:
  std::string name() const override { return "fold_shape_computations"; }
  bool apply(ir::Graph& g, const PassContext&) override {
    const std::vector<RewriteRule> rules = shape_rules();
    return for_each_graph(g, [&](ir::Graph& graph) { return apply_rules(graph, rules); });
  }
};

}  // namespace

std::unique_ptr<Pass> make_fold_shape_computations() { return std::make_unique<FoldShapeComputations>(); }

}  // namespace kiln::passes
