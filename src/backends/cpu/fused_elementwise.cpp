// kiln.FusedElementwise on the CPU: runs the body node by node with the ordinary kernels.
// Correct by construction rather than fast; a GPU backend compiles the body instead.
#include <map>

#include "backends/cpu/kernel.h"
#include "core/error.h"
#include "ops/fused_elementwise.h"
#include "ops/op_schema.h"

namespace kiln::cpu {
namespace {

// Runs one body node on concrete tensors, as the executor does for a graph node.
Status run_body_node(const ir::Node& n, const std::vector<const Tensor*>& ins, std::vector<Tensor>* outs) {
  const ops::OpSchema* schema = ops::OpRegistry::instance().find(n.domain, n.op_type);
  const Kernel* kernel = KernelRegistry::instance().find(n.domain, n.op_type);
  if (!schema || !kernel) return unsupported("body {}: op is not supported", n.describe());
  std::vector<ir::TensorType> in_types(ins.size());
  ops::InferContext ictx{n, {}, {}, {}, {}};
  for (size_t i = 0; i < ins.size(); ++i) {
    if (ins[i]) in_types[i] = ir::TensorType::of(ins[i]->dtype(), ins[i]->shape());
    ictx.input_types.push_back(ins[i] ? &in_types[i] : nullptr);
    ictx.input_values.push_back(ins[i]);
  }
  ictx.output_types.resize(n.outputs.size());
  ictx.output_values.resize(n.outputs.size());
  KILN_RETURN_IF_ERROR(schema->infer(ictx).with_context("body " + n.describe()));
  auto no_subgraphs = [](const ir::Graph&, std::vector<Tensor>*) {
    return Status(StatusCode::kInternal, "a fused body has no subgraphs");
  };
  KernelContext kctx(n, ins, ictx.output_types, no_subgraphs);
  KILN_RETURN_IF_ERROR((*kernel)(kctx).with_context("body " + n.describe()));
  *outs = std::move(kctx.outputs());
  return Status::OK();
}

Status fused_elementwise(KernelContext& ctx) {
  KILN_RETURN_IF_ERROR(ops::validate_fused_elementwise(ctx.node()));
  const ir::Graph& body = *ctx.node().attr_g("body");
  std::map<const ir::Value*, Tensor> env;
  for (int i = 0; i < ctx.num_inputs(); ++i) env[body.inputs[i]] = ctx.input(i);
  for (const auto& n : body.nodes()) {
    std::vector<const Tensor*> ins;
    for (const ir::Value* v : n->inputs) {
      ins.push_back(!v ? nullptr : v->constant ? &*v->constant : &env.at(v));
    }
    std::vector<Tensor> outs;
    KILN_RETURN_IF_ERROR(run_body_node(*n, ins, &outs));
    env[n->output(0)] = std::move(outs[0]);
  }
  const Tensor& y = env.at(body.outputs[0]);
  const ir::TensorType& want = ctx.inferred(0);
  if (want.is_concrete() && (y.shape() != want.concrete() || y.dtype() != want.dtype)) {
    return invalid_argument("{}: the body computes {} {}, not the broadcast of the inputs {}", ctx.node().describe(),
                            dtype_name(y.dtype()), shape_to_string(y.shape()), want.to_string());
  }
  ctx.set_output(0, y);
  return Status::OK();
}

}  // namespace

void register_fused_elementwise_kernels(KernelRegistry& r) {
  r.add(ops::kFusedElementwiseOp, fused_elementwise, ops::kFusedDomain);
}

}  // namespace kiln::cpu
