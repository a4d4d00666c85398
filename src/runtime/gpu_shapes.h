// Types of every value of a graph for one set of concrete input shapes, without touching the
// shared graph: the GPU executor builds one plan per input-shape set. Nodes whose inputs are
// all known on the host (weights, shapes of the now-concrete inputs) are evaluated here on the
// CPU, so shape arithmetic (Shape -> Gather -> Concat -> Reshape) costs nothing at run time.
#pragma once
#include <map>
#include <vector>

#include "ir/graph.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::runtime {

struct ConcreteTypes {
  std::map<const ir::Value*, ir::TensorType> types;  // every value read or written at top level
  std::map<const ir::Value*, Tensor> folded;         // values computed on the host at build
  std::vector<const ir::Node*> nodes;                // the nodes left to run, in order
};

// Fails (naming the node) when an output shape depends on tensor data, which a static plan
// cannot hold.
Status infer_concrete_types(const ir::Graph& g, const std::vector<ir::TensorType>& input_types, ConcreteTypes* out);

}  // namespace kiln::runtime
