// Structural checks of a graph: topological order, producer/consumer links, no dangling
// values, every value typed. Passes and the importer run it; it never changes the graph.
#pragma once
#include "ir/graph.h"
#include "kiln/status.h"

namespace kiln::ir {

Status verify_graph(const Graph& g);

}  // namespace kiln::ir
