#include "runtime/node_eval.h"

#include "core/error.h"
#include "ops/op_schema.h"

namespace kiln::runtime {

Status infer_node(const ir::Node& node, const std::vector<const Tensor*>& inputs,
                  std::vector<ir::TensorType>* out_types) {
  const ops::OpSchema* schema = ops::OpRegistry::instance().find(node.domain, node.op_type);
  if (!schema) return unsupported("{}: op is not supported", node.describe());
  std::vector<ir::TensorType> in_types(inputs.size());
  ops::InferContext ctx{node, {}, {}, {}, {}};
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i]) {
      in_types[i] = ir::TensorType::of(inputs[i]->dtype(), inputs[i]->shape());
      ctx.input_types.push_back(&in_types[i]);
    } else {
      ctx.input_types.push_back(nullptr);
    }
    ctx.input_values.push_back(inputs[i]);
  }
  ctx.output_types.resize(node.outputs.size());
  ctx.output_values.resize(node.outputs.size());
  KILN_RETURN_IF_ERROR(schema->infer(ctx));
  *out_types = std::move(ctx.output_types);
  return Status::OK();
}

Status eval_node(const ir::Node& node, const std::vector<const Tensor*>& inputs,
                 const cpu::KernelContext::SubgraphRunner& run_subgraph, std::vector<Tensor>* outputs) {
  std::vector<ir::TensorType> types;
  KILN_RETURN_IF_ERROR(infer_node(node, inputs, &types));
  const cpu::Kernel* kernel = cpu::KernelRegistry::instance().find(node.domain, node.op_type);
  if (!kernel) return unsupported("{}: the CPU backend has no kernel for this op", node.describe());
  cpu::KernelContext kctx(node, inputs, types, run_subgraph);
  KILN_RETURN_IF_ERROR((*kernel)(kctx));
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (!node.outputs[i]) continue;
    const Tensor& t = kctx.outputs()[i];
    KILN_ASSERT(t.defined(), "{}: kernel produced no output {}", node.describe(), i);
    KILN_ASSERT(t.dtype() == types[i].dtype || types[i].dtype == DType::kUndefined,
                "{}: output {} is {} but inference said {}", node.describe(), i, dtype_name(t.dtype()),
                types[i].to_string());
    if (types[i].is_concrete()) {
      KILN_ASSERT(t.shape() == types[i].concrete(), "{}: output {} has shape {} but inference said {}",
                  node.describe(), i, shape_to_string(t.shape()), types[i].to_string());
    }
  }
  *outputs = std::move(kctx.outputs());
  return Status::OK();
}

}  // namespace kiln::runtime
