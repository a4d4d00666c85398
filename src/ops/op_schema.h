// What kiln knows about an op independent of any backend: which attributes it takes, how to
// bring older opset forms to the current one, shape/type inference, and cost.
//
// Shape inference serves twice: statically over the IR (dims may be symbolic or unknown,
// input values known only for constants) and at run time with concrete shapes and every
// input value known. So one function decides each op's output shapes.
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "kiln/status.h"

namespace kiln::ops {

struct InferContext {
  const ir::Node& node;
  std::vector<const ir::TensorType*> input_types;  // nullptr for an absent optional input
  std::vector<const Tensor*> input_values;         // nullptr when the value is not known
  std::vector<ir::TensorType> output_types;        // to fill, one per node output
  // Optional: output values inference can compute cheaply (Shape of a static shape), so
  // static inference can see through shape computations.
  std::vector<std::optional<Tensor>> output_values;

  int num_inputs() const { return static_cast<int>(input_types.size()); }
  bool has_input(int i) const { return i < num_inputs() && input_types[i] != nullptr; }
  const ir::TensorType& input_type(int i) const { return *input_types.at(i); }
  // Known value of input i, or nullptr.
  const Tensor* input_value(int i) const { return i < static_cast<int>(input_values.size()) ? input_values[i] : nullptr; }
  int num_outputs() const { return static_cast<int>(output_types.size()); }
};

// Work an op does for given concrete input/output shapes.
struct Cost {
  double macs = 0;   // multiply-accumulates (convolutions, matrix products)
  double flops = 0;  // other arithmetic (elementwise, reductions); 2*macs is added by reports
  double bytes = 0;  // bytes read and written (inputs + outputs, weights included)
};

struct CostContext {
  const ir::Node& node;
  std::vector<const ir::TensorType*> input_types;  // concrete, or nullptr when absent
  std::vector<const ir::TensorType*> output_types;
};

struct OpSchema {
  std::string op_type;
  std::string domain;  // "" for ai.onnx
  // Attributes the op accepts; any other attribute on a node is reported as unsupported.
  std::vector<std::string> attributes;
  // Rewrites an older-opset node into the form `infer` and the kernels expect (for example
  // attribute axes into an input), and rejects attribute values kiln does not implement.
  // Optional.
  std::function<Status(ir::Node&, ir::Graph&)> canonicalize;
  std::function<Status(InferContext&)> infer;
  // Optional; when absent the cost is one flop per output element plus the bytes moved.
  std::function<Cost(const CostContext&)> cost;
};

// All registered op schemas, keyed by (domain, op_type).
class OpRegistry {
 public:
  static OpRegistry& instance();
  void add(OpSchema schema);
  const OpSchema* find(const std::string& domain, const std::string& op_type) const;
  std::vector<std::string> op_types() const;

 private:
  OpRegistry();
  std::map<std::pair<std::string, std::string>, OpSchema> schemas_;
};

// Each op family registers its schemas through one function (see registry.cpp).
void register_elementwise_ops(OpRegistry& r);
void register_cast_quant_ops(OpRegistry& r);
void register_tensor_ops(OpRegistry& r);
void register_index_ops(OpRegistry& r);
void register_conv_pool_ops(OpRegistry& r);
void register_norm_ops(OpRegistry& r);
void register_matmul_ops(OpRegistry& r);
void register_reduce_ops(OpRegistry& r);
void register_resize_ops(OpRegistry& r);
void register_control_ops(OpRegistry& r);
void register_rnn_ops(OpRegistry& r);
void register_extra_nn_ops(OpRegistry& r);
void register_extra_vision_ops(OpRegistry& r);
void register_fused_elementwise_ops(OpRegistry& r);  // fused_elementwise.cpp: kiln.FusedElementwise
void register_layout_ops(OpRegistry& r);  // layout_ops.cpp: kiln.ChannelsLastPool
void register_fused_ops(OpRegistry& r);  // kiln.FusedConv, kiln.FusedGemm (fused_conv.cpp)

}  // namespace kiln::ops
