// Small helpers shared by the clean-up passes (eliminate_noops, constant_folding,
// fold_shape_computations, eliminate_common_subexpressions, eliminate_dead_code).
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "ir/graph.h"
#include "kiln/tensor.h"

namespace kiln::passes {

// Ops whose result differs between runs: never folded or merged.
bool is_random_op(const ir::Node& n);
// True when the node carries a subgraph (If, Loop, Scan): never folded or merged.
bool has_subgraph(const ir::Node& n);

// passes::replace_value (graph outputs keep their names) that also points the subgraphs
// capturing `from` (implicit inputs and their `outer` references) at `to`.
void replace_everywhere(ir::Graph& g, ir::Value* from, ir::Value* to);

// Replaces `v` by a new constant holding `t`; the constant takes v's name when v is not a
// graph output (a graph output keeps its name through an Identity). Returns the constant.
ir::Value* replace_with_constant(ir::Graph& g, ir::Value* v, Tensor t);

// Whether anything reads `v`: a node slot, the graph outputs, or a subgraph capture.
bool is_used(const ir::Value& v, const ir::Graph& g);

// Runs `fn` on every subgraph of `g` (innermost first), then on `g`; true if any call was.
bool for_each_graph(ir::Graph& g, const std::function<bool(ir::Graph&)>& fn);

// Same rank and the same dims, each known or named (symbolic dims equal by name); a type
// with an unknown rank or an unknown dim is never the same as anything.
bool same_static_type(const ir::TensorType& a, const ir::TensorType& b);

// The integer values of a constant value (int32/int64), false when `v` is absent, not a
// constant or not integral.
bool constant_ints(const ir::Value* v, std::vector<int64_t>* out);

}  // namespace kiln::passes
