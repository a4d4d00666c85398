// Selection ops: TopK, ArgMax, ArgMin.
#include "ops/index.h"
#include "ops/shape_util.h"

namespace kiln::ops {
namespace {

// Before opset 10, k is an attribute; the canonical form takes it as input 1.
Status canonicalize_topk(ir::Node& node, ir::Graph& g) {
  if (!node.has_attr("k")) return Status::OK();
  KILN_ENSURE(node.input(1) == nullptr, "TopK has both a k attribute and a K input");
  ir::Value* k = g.add_constant(node.name + "_k", ints_to_tensor({node.attr_i("k", 0)}));
  node.inputs.resize(2);
  node.inputs[1] = k;
  k->consumers.push_back(&node);
  node.attrs.erase("k");
  return Status::OK();
}

Status infer_topk(InferContext& ctx) {
  const auto& x = ctx.input_type(0);
  KILN_ENSURE(ctx.has_input(1), "TopK needs K");
  KILN_RETURN_IF_ERROR(expect_dtype(ctx, 1, {DType::kInt64}));
  if (!x.has_rank()) {
    set_output(ctx, 0, x.dtype, std::nullopt);
    set_output(ctx, 1, DType::kInt64, std::nullopt);
    return Status::OK();
  }
  int64_t axis = 0;
  KILN_RETURN_IF_ERROR(normalize_axis(ctx.node.attr_i("axis", -1), x.rank(), &axis));
  std::vector<ir::Dim> out = *x.shape;
  out[axis] = ir::Dim();
  if (const Tensor* kt = ctx.input_value(1)) {
    std::vector<int64_t> k;
    KILN_RETURN_IF_ERROR(tensor_to_ints(*kt, &k));
    KILN_ENSURE(k.size() == 1, "K must hold one value, got {}", k.size());
    const ir::Dim& d = (*x.shape)[axis];
    KILN_ENSURE(k[0] >= 0 && (!d.known() || k[0] <= d.value), "k = {} is out of range for axis size {}", k[0],
                d.to_string());
    out[axis] = k[0];
  }
  set_output(ctx, 0, x.dtype, out);
  set_output(ctx, 1, DType::kInt64, out);
  return Status::OK();
}

Status infer_arg(InferContext& ctx) {
  const auto& x = ctx.input_type(0);
  if (!x.has_rank()) {
    set_output(ctx, 0, DType::kInt64, std::nullopt);
    return Status::OK();
  }
  int64_t axis = 0;
  KILN_RETURN_IF_ERROR(normalize_axis(ctx.node.attr_i("axis", 0), x.rank(), &axis));
  std::vector<ir::Dim> out = *x.shape;
  if (ctx.node.attr_i("keepdims", 1)) out[axis] = 1;
  else out.erase(out.begin() + axis);
  set_output(ctx, 0, DType::kInt64, std::move(out));
  return Status::OK();
}

}  // namespace

void register_select_ops(OpRegistry& r) {
  r.add({.op_type = "TopK",
         .attributes = {"axis", "k", "largest", "sorted"},
         .canonicalize = canonicalize_topk,
         .infer = infer_topk});
  for (const char* op : {"ArgMax", "ArgMin"}) {
    r.add({.op_type = op, .attributes = {"axis", "keepdims", "select_last_index"}, .infer = infer_arg});
  }
}

}  // namespace kiln::ops
