// The CPU reference backend's kernel interface. A kernel reads its inputs, allocates its
// outputs (with the shapes shape inference already computed, or its own where inference
// could not know them) and fills them. Kernels are simple and right by inspection: they are
// the oracle every other backend is tested against.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::cpu {

class KernelContext {
 public:
  // Runs a subgraph (an If branch) with `captured` binding the values it reads from
  // enclosing graphs; fills `outputs` in the subgraph's output order.
  using SubgraphRunner = std::function<Status(const ir::Graph&, std::vector<Tensor>* outputs)>;

  KernelContext(const ir::Node& node, std::vector<const Tensor*> inputs, std::vector<ir::TensorType> inferred,
                SubgraphRunner run_subgraph)
      : node_(node), inputs_(std::move(inputs)), inferred_(std::move(inferred)),
        outputs_(node.outputs.size()), run_subgraph_(std::move(run_subgraph)) {}

  const ir::Node& node() const { return node_; }
  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  bool has_input(int i) const { return i < num_inputs() && inputs_[i] != nullptr; }
  // Input i; only call when has_input(i).
  const Tensor& input(int i) const { return *inputs_.at(i); }
  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  // False for an omitted optional output; the kernel may skip computing it.
  bool has_output(int i) const { return i < num_outputs() && node_.outputs[i] != nullptr; }

  // Allocates output i with the dtype and concrete shape shape inference computed.
  Tensor& alloc_output(int i);
  // Allocates output i with an explicit dtype and shape (for data-dependent shapes).
  Tensor& alloc_output(int i, DType t, std::vector<int64_t> shape);
  // Makes output i an existing tensor (zero-copy reshape, identity).
  void set_output(int i, Tensor t) { outputs_.at(i) = std::move(t); }
  const ir::TensorType& inferred(int i) const { return inferred_.at(i); }

  Status run_subgraph(const ir::Graph& g, std::vector<Tensor>* outputs) const { return run_subgraph_(g, outputs); }

  std::vector<Tensor>& outputs() { return outputs_; }

 private:
  const ir::Node& node_;
  std::vector<const Tensor*> inputs_;
  std::vector<ir::TensorType> inferred_;
  std::vector<Tensor> outputs_;
  SubgraphRunner run_subgraph_;
};

using Kernel = std::function<Status(KernelContext&)>;

class KernelRegistry {
 public:
  static KernelRegistry& instance();
  void add(const std::string& op_type, Kernel k, const std::string& domain = "");
  const Kernel* find(const std::string& domain, const std::string& op_type) const;

 private:
  KernelRegistry();
  std::map<std::pair<std::string, std::string>, Kernel> kernels_;
};

// One function per op family, mirroring src/ops (see kernel_registry.cpp).
void register_elementwise_kernels(KernelRegistry& r);
void register_cast_quant_kernels(KernelRegistry& r);
void register_tensor_kernels(KernelRegistry& r);
void register_index_kernels(KernelRegistry& r);
void register_conv_pool_kernels(KernelRegistry& r);
void register_norm_kernels(KernelRegistry& r);
void register_matmul_kernels(KernelRegistry& r);
void register_reduce_kernels(KernelRegistry& r);
void register_resize_kernels(KernelRegistry& r);
void register_control_kernels(KernelRegistry& r);
void register_rnn_kernels(KernelRegistry& r);
void register_extra_nn_kernels(KernelRegistry& r);
void register_extra_vision_kernels(KernelRegistry& r);
void register_fused_elementwise_kernels(KernelRegistry& r);  // fused_elementwise.cpp
void register_layout_kernels(KernelRegistry& r);  // layout_ops.cpp: kiln.ChannelsLastPool
void register_fused_kernels(KernelRegistry& r);  // fused_conv.cpp: kiln.FusedConv, kiln.FusedGemm

}  // namespace kiln::cpu
