// Small helpers the pattern fusions (fuse_layernorm, fuse_gelu, fuse_softmax) share: reading
// scalar constants with a tolerance, the axes of a Reduce* node, and the opset a replacement
// node gets.
#pragma once
#include <optional>
#include <vector>

#include "ir/graph.h"
#include "passes/matcher.h"

namespace kiln::passes::pattern {

// Exporters write constants such as sqrt(2) or sqrt(2/pi) rounded to float32 (relative error
// < 1e-7) or, in hand-written graphs, to 4-5 significant digits (1.4142, 0.7071: relative
// error ~1.5e-5). 1e-4 accepts both, and changes a GELU/LayerNorm result by far less than
// float32 erf/tanh themselves err, while rejecting any constant that means something else
// (0.6 for 0.5).
constexpr double kConstantRelTol = 1e-4;

// The value of a one-element floating-point constant (any rank), or nullopt.
std::optional<double> scalar_constant(const ir::Value* v);
bool near(double got, double want, double rel_tol = kConstantRelTol);
// A pattern for a one-element floating-point constant within kConstantRelTol of `want`.
Pattern scalar_near(double want);

// The axes a Reduce* node reduces over an input of rank `rank`, normalized and sorted.
// False when they are not known statically or the node is a no-op (noop_with_empty_axes).
bool reduce_axes(const ir::Node& n, int rank, std::vector<int64_t>* axes);
bool keeps_dims(const ir::Node& n);
// True when `axes` (sorted) are exactly the last axes.size() axes of a rank-`rank` tensor.
bool are_trailing(const std::vector<int64_t>& axes, int rank);

// Attribute values for the nodes a pass creates.
ir::Attribute int_attr(int64_t i);
ir::Attribute ints_attr(std::vector<int64_t> v);
ir::Attribute float_attr(float f);
ir::Attribute string_attr(std::string s);

// Points the readers of `from` at a new node's output and gives the node at least
// `min_opset` of the default domain (the op's semantics as kiln implements them). The node
// reads `inputs`; its output takes `from`'s type.
ir::Node* replace_with_node(ir::Graph& g, ir::Value* from, const std::string& op_type,
                            std::vector<ir::Value*> inputs, int min_opset);

// True when every reader of `v` is one of `nodes` and `v` is not a graph output (so the
// fusion that swallows `nodes` leaves `v` dead).
bool only_read_by(const ir::Value& v, const std::vector<ir::Node*>& nodes, const ir::Graph& g);

}  // namespace kiln::passes::pattern
