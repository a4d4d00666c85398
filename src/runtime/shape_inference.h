// Static type and shape inference over a whole graph (and its subgraphs), using each op's
// schema. Dims that depend on data stay unknown; small values computable from constants
// (shape arithmetic) are evaluated on the CPU backend so shapes flow through them.
#pragma once
#include "ir/graph.h"
#include "kiln/status.h"

namespace kiln::runtime {

Status infer_graph_types(ir::Graph& g);

}  // namespace kiln::runtime
