// Elementwise op family: shared inference helpers and the family's registration.
#include "ops/elementwise.h"

#include <algorithm>

#include "core/error.h"
#include "ops/shape_util.h"

namespace kiln::ops {
namespace elementwise {

Status check_inputs(const InferContext& ctx, int min_inputs, int max_inputs) {
  const int n = ctx.num_inputs();
  if (n < min_inputs || (max_inputs >= 0 && n > max_inputs)) {
    if (max_inputs < 0) return invalid_argument("{} takes at least {} inputs, got {}", ctx.node.op_type, min_inputs, n);
    if (min_inputs == max_inputs) return invalid_argument("{} takes {} inputs, got {}", ctx.node.op_type, min_inputs, n);
    return invalid_argument("{} takes {} to {} inputs, got {}", ctx.node.op_type, min_inputs, max_inputs, n);
  }
  for (int i = 0; i < min_inputs; ++i) {
    if (!ctx.has_input(i)) return invalid_argument("{}: input {} is required", ctx.node.op_type, i);
  }
  return Status::OK();
}

Status check_dtype(const InferContext& ctx, int i, const std::vector<DType>& allowed) {
  const DType t = ctx.input_type(i).dtype;
  if (std::find(allowed.begin(), allowed.end(), t) != allowed.end()) return Status::OK();
  return unsupported("input {} has dtype {}, which {} does not accept", i, dtype_name(t), ctx.node.op_type);
}

Status check_same_dtype(const InferContext& ctx, int i, int j) {
  const DType a = ctx.input_type(i).dtype, b = ctx.input_type(j).dtype;
  if (a == b) return Status::OK();
  return invalid_argument("{}: inputs {} and {} must have the same dtype, got {} and {}", ctx.node.op_type, i, j,
                          dtype_name(a), dtype_name(b));
}

Status infer_broadcast(InferContext& ctx, const std::vector<int>& inputs, DType out) {
  std::vector<const ir::TensorType*> types;
  for (int i : inputs) {
    const ir::TensorType& t = ctx.input_type(i);
    if (!t.has_rank()) {
      set_output(ctx, 0, out, std::nullopt);
      return Status::OK();
    }
    types.push_back(&t);
  }
  std::vector<ir::Dim> dims;
  KILN_RETURN_IF_ERROR(broadcast_types(types, &dims));
  set_output(ctx, 0, out, std::move(dims));
  return Status::OK();
}

OpSchema make_schema(std::string op_type, std::function<Status(InferContext&)> infer,
                     std::vector<std::string> attributes, std::function<Status(ir::Node&, ir::Graph&)> canonicalize) {
  OpSchema s;
  s.op_type = std::move(op_type);
  s.attributes = std::move(attributes);
  s.canonicalize = std::move(canonicalize);
  s.infer = std::move(infer);
  return s;
}

OpSchema unary_schema(std::string op_type, std::vector<DType> allowed, std::vector<std::string> attributes,
                      DType out) {
  OpSchema s;
  s.op_type = std::move(op_type);
  s.attributes = std::move(attributes);
  s.infer = [allowed = std::move(allowed), out](InferContext& ctx) {
    KILN_RETURN_IF_ERROR(check_inputs(ctx, 1, 1));
    KILN_RETURN_IF_ERROR(check_dtype(ctx, 0, allowed));
    same_as_input(ctx, 0, 0);
    if (out != DType::kUndefined) ctx.output_types[0].dtype = out;
    return Status::OK();
  };
  return s;
}

}  // namespace elementwise

void register_elementwise_ops(OpRegistry& r) {
  register_unary_ops(r);
  register_activation_ops(r);
  register_binary_ops(r);
}

}  // namespace kiln::ops
