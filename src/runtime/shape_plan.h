// Types of every value of a graph for one set of concrete input shapes, without touching the
// shared graph: the GPU executor builds one plan per input-shape set. Nodes whose inputs are
// all known on the host (weights, shapes of the now-concrete inputs) are evaluated here on the
// CPU, so shape arithmetic (Shape -> Gather -> Concat -> Reshape) costs nothing at run time.
//
// Shape tensors (as in TensorRT): small integer graph inputs (and float Resize/Upsample scales)
// whose VALUES decide output shapes, like Reshape's shape or TopK's k given as graph inputs.
// The executor finds which inputs are such (find_value_inputs), keys its plans on their values
// and passes them to infer_concrete_types as known values, so the shape math folds. Inputs
// whose values only flow into data (token ids into Gather) are not keyed: their plan is reused.
//
// Pure host code: it compiles in CPU-only builds, where tests plan every model without a GPU.
#pragma once
#include <map>
#include <memory>
#include <vector>

#include "ir/graph.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::runtime {

struct ConcreteTypes {
  std::map<const ir::Value*, ir::TensorType> types;  // every value read or written at top level
  std::map<const ir::Value*, Tensor> folded;         // values computed on the host at build
  std::vector<const ir::Node*> nodes;                // the nodes left to run, in order
  // Identity nodes made by the planner: an If whose condition is known at build runs its taken
  // branch inline, wired to the enclosing graph by these. `nodes` points into them, so whoever
  // keeps `nodes` keeps these too.
  std::vector<std::unique_ptr<ir::Node>> synthetic;
};

// Whether graph input `in` holding `numel` elements of `t` may be a shape tensor:
// an integer or bool tensor of at most 256 elements, or a float one feeding Resize's roi or
// scales, Upsample's scales or Range.
bool is_shape_tensor_candidate(const ir::Value& in, DType t, int64_t numel);

// `values[i]` is the value of graph input i when it is a candidate (else nullptr). Sets
// `needed[i]` for the inputs whose values some output shape (or a taken If branch) depends on.
// Fails like infer_concrete_types when a shape stays unknown even with these values.
Status find_value_inputs(const ir::Graph& g, const std::vector<ir::TensorType>& input_types,
                         const std::vector<const Tensor*>& values, std::vector<bool>* needed);

// `known_values[i]` (nullptr when not known) is treated like a constant: the plan is valid only
// for this value. Fails (naming the node) when an output shape depends on tensor data, which
// a static plan cannot hold.
Status infer_concrete_types(const ir::Graph& g, const std::vector<ir::TensorType>& input_types,
                            const std::vector<const Tensor*>& known_values, ConcreteTypes* out);

}  // namespace kiln::runtime
