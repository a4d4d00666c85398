// Runs a graph node by node on the CPU reference backend. Shapes are resolved from the
// actual inputs at every run, so dynamic dimensions need no preparation.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::runtime {

class CpuExecutor {
 public:
  explicit CpuExecutor(const ir::Graph& g) : graph_(g) {}
  // Checks inputs against the graph's declared types, runs every node, returns the outputs
  // in graph-output order.
  Status run(const std::map<std::string, Tensor>& inputs, std::vector<Tensor>* outputs) const;

 private:
  const ir::Graph& graph_;
};

// Runs a subgraph (an If branch) on the CPU; `outer` gives the values of the enclosing graph
// it reads (Value::outer). The GPU host fallback runs If nodes through this.
Status run_subgraph_on_cpu(const ir::Graph& sub, const std::function<const Tensor*(const ir::Value*)>& outer,
                           std::vector<Tensor>* outputs);

// Checks one input tensor against its declared type (dtype, rank, known dims).
Status check_input(const ir::Value& declared, const Tensor& t);

}  // namespace kiln::runtime
