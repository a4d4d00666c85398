// Control-flow ops: If. Branch subgraphs are inferred before the node that owns them, so the
// node's output types come from the branches' output values.
#include "core/error.h"
#include "ops/op_schema.h"
#include "ops/shape_util.h"

namespace kiln::ops {
namespace {

// The type both branches agree on: dtype from then_branch, dims that differ become unknown,
// and a rank that differs (allowed since opset 11) becomes an unknown rank.
ir::TensorType merge_branch_types(const ir::TensorType& a, const ir::TensorType& b) {
  ir::TensorType t;
  t.dtype = a.dtype;
  if (!a.has_rank() || !b.has_rank() || a.rank() != b.rank()) return t;
  std::vector<ir::Dim> dims = *a.shape;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (!(dims[i] == (*b.shape)[i])) dims[i] = ir::Dim();
  }
  t.shape = std::move(dims);
  return t;
}

Status infer_if(InferContext& ctx) {
  const ir::Graph* then_g = ctx.node.attr_g("then_branch");
  const ir::Graph* else_g = ctx.node.attr_g("else_branch");
  if (!then_g || !else_g) return invalid_argument("If needs graph attributes then_branch and else_branch");
  const size_t n = ctx.output_types.size();
  if (then_g->outputs.size() != n || else_g->outputs.size() != n) {
    return invalid_argument("If has {} outputs but then_branch has {} and else_branch {}", n, then_g->outputs.size(),
                            else_g->outputs.size());
  }
  if (!ctx.has_input(0)) return invalid_argument("If needs a condition input");
  KILN_RETURN_IF_ERROR(expect_dtype(ctx, 0, {DType::kBool}));
  if (ctx.input_type(0).is_concrete()) {
    const int64_t numel = Tensor::numel_of(ctx.input_type(0).concrete());
    if (numel != 1) return invalid_argument("If condition must have exactly one element, got {}", numel);
  }
  // With the condition known (always at run time) the taken branch gives the exact type.
  const Tensor* cond = ctx.input_value(0);
  const ir::Graph* taken = cond ? (*cond->data_as<bool>() ? then_g : else_g) : nullptr;
  for (size_t i = 0; i < n; ++i) {
    const ir::TensorType& t = then_g->outputs[i]->type;
    const ir::TensorType& e = else_g->outputs[i]->type;
    if (t.dtype != e.dtype && t.dtype != DType::kUndefined && e.dtype != DType::kUndefined) {
      return invalid_argument("If output {} is {} in then_branch but {} in else_branch", i, dtype_name(t.dtype),
                              dtype_name(e.dtype));
    }
    ctx.output_types[i] = taken ? taken->outputs[i]->type : merge_branch_types(t, e);
    if (ctx.output_types[i].dtype == DType::kUndefined) ctx.output_types[i].dtype = e.dtype;
  }
  return Status::OK();
}

}  // namespace

void register_control_ops(OpRegistry& r) {
  r.add({.op_type = "If", .attributes = {"then_branch", "else_branch"}, .infer = infer_if});
}

}  // namespace kiln::ops
