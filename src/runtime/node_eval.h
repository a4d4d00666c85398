// Running one node on the CPU backend: shape inference with concrete inputs, then the kernel,
// then checks that the kernel produced what inference promised.
#pragma once
#include <vector>

#include "backends/cpu/kernel.h"
#include "ir/graph.h"
#include "kiln/status.h"

namespace kiln::runtime {

// Infers output types for `node` given concrete input tensors (nullptr for absent inputs).
Status infer_node(const ir::Node& node, const std::vector<const Tensor*>& inputs,
                  std::vector<ir::TensorType>* out_types);

Status eval_node(const ir::Node& node, const std::vector<const Tensor*>& inputs,
                 const cpu::KernelContext::SubgraphRunner& run_subgraph, std::vector<Tensor>* outputs);

}  // namespace kiln::runtime
