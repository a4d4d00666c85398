// fuse_softmax: the two ways exporters spell softmax out,
//   e = Exp(x - ReduceMax(x, axis, keepdims=1));  e / ReduceSum(e, axis, keepdims=1)
//   e = Exp(x);                                   e / ReduceSum(e, axis, keepdims=1)
// become Softmax(x, axis) with opset-13 semantics (one axis, no 2-D coercion). The max
// subtraction only guards against overflow, and Softmax does it itself. When the ReduceMax
// does not fit (another axis), the second rule still fires with the subtraction as its input:
// softmax of (x - m) is exactly what the graph computes.
#include <algorithm>

#include "passes/matcher.h"
#include "passes/passes.h"
#include "passes/pattern_util.h"

namespace kiln::passes {
namespace {

using pattern::reduce_axes;

// The single axis a keepdims reduction reduces over a rank-`rank` input, or -1.
int64_t single_axis(const ir::Node& reduce, int rank) {
  std::vector<int64_t> axes;
  if (!pattern::keeps_dims(reduce) || !reduce_axes(reduce, rank, &axes) || axes.size() != 1) return -1;
  return axes[0];
}

// e / ReduceSum(e) with e = Exp(<exp_input>); `exp_input` names the Exp's input pattern.
Pattern softmax_pattern(Pattern exp_input) {
  return Pattern::op("Div", {Pattern::op("Exp", {std::move(exp_input)}).allow_shared().bind("e"),
                             Pattern::op("ReduceSum", {Pattern::any().bind("e")}).bind("sum")});
}

// Replaces the match with Softmax(input); `max` is the ReduceMax node the input subtracts, or
// nullptr when the rule does not look at one.
bool rewrite(ir::Graph& g, const Match& m, ir::Value* input, const ir::Node* max) {
  ir::Value* e = m.value("e");
  const int rank = e->type.rank();
  const int64_t axis = single_axis(*m.node("sum"), rank);
  if (axis < 0) return false;
  if (max && single_axis(*max, rank) != axis) return false;
  // Exp's output must die with the fusion, or the exponentials would be computed twice.
  if (!pattern::only_read_by(*e, {m.root, m.node("sum")}, g)) return false;
  ir::Node* softmax = pattern::replace_with_node(g, m.root->output(0), "Softmax", {input}, 13);
  softmax->attrs["axis"] = pattern::int_attr(axis);
  return true;
}

class FuseSoftmax final : public Pass {
 public:
  std::string name() const override { return "fuse_softmax"; }
  bool apply(ir::Graph& g, const PassContext&) override {
    const Pattern shifted = Pattern::op("Sub", {Pattern::any().bind("x"), Pattern::op("ReduceMax", {Pattern::any().bind("x")}).bind("max")});
    const std::vector<RewriteRule> rules = {
        {"stable_softmax", softmax_pattern(shifted),
         [](ir::Graph& graph, const Match& m) { return rewrite(graph, m, m.value("x"), m.node("max")); }},
        {"plain_softmax", softmax_pattern(Pattern::any().bind("x")),
         [](ir::Graph& graph, const Match& m) { return rewrite(graph, m, m.value("x"), nullptr); }},
    };
    if (!apply_rules(g, rules)) return false;
    remove_dead_nodes(g);  // the shared Exp outlives its matched readers in apply_rules' sweep
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> make_fuse_softmax() { return std::make_unique<FuseSoftmax>(); }

}  // namespace kiln::passes
