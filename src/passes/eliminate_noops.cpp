// eliminate_noops: removes nodes that pass their input through unchanged (Identity, Dropout at
// inference, Cast to the same type, reshapes to the same shape, identity Transposes, zero Pads,
// whole-tensor Slices, one-input Concats) and merges Transpose pairs.
#include <algorithm>
#include <cstring>
#include <numeric>

#include "passes/cleanup_util.h"
#include "passes/matcher.h"
#include "passes/passes.h"

namespace kiln::passes {
namespace {

bool is_graph_input(const ir::Value& v, const ir::Graph& g) {
  return std::find(g.inputs.begin(), g.inputs.end(), &v) != g.inputs.end();
}

// Points the readers of the root's output at `v`. An Identity that carries a graph output's
// name for a value that cannot take it (a graph input, a constant, another graph output)
// stays: replacing it would only create the same Identity again.
bool forward(ir::Graph& g, ir::Node* root, ir::Value* v) {
  ir::Value* out = root->output(0);
  if (!out || !v || !is_used(*out, g)) return false;
  if (root->op_type == "Identity" && is_graph_output(*out, g) &&
      (!v->producer || is_graph_input(*v, g) || is_graph_output(*v, g))) {
    return false;
  }
  replace_everywhere(g, out, v);
  return true;
}

// A rule that forwards the root's first input when `is_noop` holds for the root.
RewriteRule passthrough(std::string name, Pattern pattern, std::function<bool(const ir::Node&)> is_noop) {
  return {std::move(name), std::move(pattern.where(std::move(is_noop))),
          [](ir::Graph& g, const Match& m) { return forward(g, m.root, m.root->input(0)); }};
}

bool same_io_type(const ir::Node& n) {
  return n.input(0) && n.output(0) && same_static_type(n.input(0)->type, n.output(0)->type);
}

bool all_zero_bytes(const Tensor& t) {
  const auto* p = static_cast<const unsigned char*>(t.data());
  return std::all_of(p, p + t.nbytes(), [](unsigned char b) { return b == 0; });
}

// Dropout in inference (training_mode absent or constant false) whose mask nobody reads.
bool drop_inference_dropout(ir::Graph& g, const Match& m) {
  const ir::Node& n = *m.root;
  if (n.output(1) && is_used(*n.output(1), g)) return false;
  const ir::Value* training = n.input(2);
  if (training && !(training->constant && all_zero_bytes(*training->constant))) return false;
  return forward(g, m.root, n.input(0));
}

// The Transpose's permutation for an input of rank `rank` (reversed when perm is absent);
// empty when it is not a valid permutation.
std::vector<int64_t> transpose_perm(const ir::Node& n, int rank) {
  std::vector<int64_t> perm = n.attr_ints("perm");
  if (!n.has_attr("perm")) {
    if (rank < 0) return {};
    perm.resize(rank);
    std::iota(perm.rbegin(), perm.rend(), 0);
  }
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (sorted[i] != static_cast<int64_t>(i)) return {};
  }
  if (rank >= 0 && static_cast<int>(perm.size()) != rank) return {};
  return perm;
}

bool is_identity_perm(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

bool is_identity_transpose(const ir::Node& n) {
  const int rank = n.input(0) ? n.input(0)->type.rank() : -1;
  const std::vector<int64_t> perm = transpose_perm(n, rank);
  return rank >= 0 && static_cast<int>(perm.size()) == rank && is_identity_perm(perm);
}

// Transpose(Transpose(x, p1), p2) reads x[p1[p2[i]]]: one Transpose, or none if the identity.
bool merge_transposes(ir::Graph& g, const Match& m) {
  ir::Node* inner = m.node("inner");
  ir::Value* x = inner->input(0);
  const int rank = x ? x->type.rank() : -1;
  const std::vector<int64_t> p1 = transpose_perm(*inner, rank);
  const std::vector<int64_t> p2 = transpose_perm(*m.root, rank);
  if (rank < 0 || static_cast<int>(p1.size()) != rank || p2.size() != p1.size()) return false;
  std::vector<int64_t> perm(rank);
  for (int i = 0; i < rank; ++i) perm[i] = p1[p2[i]];
  if (is_identity_perm(perm)) return forward(g, m.root, x);
  ir::Value* out = m.root->output(0);
  ir::Value* merged = g.add_value(out->name, out->type);
  ir::Node* t = g.add_node("Transpose", {x}, {merged}, m.root->name);
  t->opset = m.root->opset;
  t->attrs["perm"] = ir::Attribute{.kind = ir::Attribute::Kind::kInts, .ints = perm};
  replace_everywhere(g, out, merged);
  return true;
}

bool is_zero_pad(const ir::Node& n) {
  std::vector<int64_t> pads;
  return constant_ints(n.input(1), &pads) &&
         std::all_of(pads.begin(), pads.end(), [](int64_t p) { return p == 0; });
}

// A Slice with positive steps whose static output shape equals its input's keeps everything
// (a negative step with the same shape would reverse the data).
bool is_whole_slice(const ir::Node& n) {
  if (!same_io_type(n) || !n.input(0)->type.is_concrete()) return false;
  if (!n.input(4)) return true;
  std::vector<int64_t> steps;
  return constant_ints(n.input(4), &steps) &&
         std::all_of(steps.begin(), steps.end(), [](int64_t s) { return s > 0; });
}

bool is_same_type_cast(const ir::Node& n) {
  const ir::Value* in = n.input(0);
  const ir::Value* out = n.output(0);
  return in && out && in->type.dtype != DType::kUndefined && in->type.dtype == out->type.dtype;
}

std::vector<RewriteRule> noop_rules() {
  return {
      passthrough("identity", Pattern::op("Identity"), [](const ir::Node&) { return true; }),
      {"inference_dropout", Pattern::op("Dropout"), drop_inference_dropout},
      passthrough("same_type_cast", Pattern::any_of({"Cast", "CastLike"}), is_same_type_cast),
      passthrough("same_shape_reshape", Pattern::any_of({"Reshape", "Expand", "Squeeze", "Unsqueeze", "Flatten"}),
                  same_io_type),
      passthrough("identity_transpose", Pattern::op("Transpose"), is_identity_transpose),
      {"transpose_pair", Pattern::op("Transpose", {Pattern::op("Transpose").allow_shared().bind("inner")}),
       merge_transposes},
      passthrough("zero_pad", Pattern::op("Pad"), is_zero_pad),
      passthrough("whole_slice", Pattern::op("Slice"), is_whole_slice),
      passthrough("single_concat", Pattern::op("Concat"), [](const ir::Node& n) { return n.inputs.size() == 1; }),
  };
}

class EliminateNoops final : public Pass {
 public:
  std::string name() const override { return "eliminate_noops"; }
  bool apply(ir::Graph& g, const PassContext&) override {
    const std::vector<RewriteRule> rules = noop_rules();
    return for_each_graph(g, [&](ir::Graph& graph) { return apply_rules(graph, rules); });
  }
};

}  // namespace

std::unique_ptr<Pass> make_eliminate_noops() { return std::make_unique<EliminateNoops>(); }

}  // namespace kiln::passes
