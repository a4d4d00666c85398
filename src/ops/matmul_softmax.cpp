// Softmax, LogSoftmax and Hardmax: schemas and the axis geometry their kernels share.
#include "core/error.h"
#include "ops/matmul.h"
#include "ops/shape_util.h"

namespace kiln::ops {
namespace {

// Opset 13 changed the default axis and stopped flattening the input to 2-D.
bool coerces_to_2d(const ir::Node& node) { return node.opset > 0 && node.opset < 13; }

Status infer_softmax(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(
      expect_dtype(ctx, 0, {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16}));
  const auto& x = ctx.input_type(0);
  if (x.has_rank()) {
    int64_t axis = 0;
    const int64_t dflt = coerces_to_2d(ctx.node) ? 1 : -1;
    KILN_RETURN_IF_ERROR(normalize_axis(ctx.node.attr_i("axis", dflt), x.rank(), &axis));
  }
  same_as_input(ctx, 0, 0);
  return Status::OK();
}

Cost softmax_cost(const CostContext& ctx) {
  Cost c;
  const double n = static_cast<double>(Tensor::numel_of(ctx.input_types[0]->concrete()));
  c.flops = 4 * n;  // max, subtract-exp, sum, divide
  c.bytes = 2 * n * static_cast<double>(dtype_size(ctx.input_types[0]->dtype));
  return c;
}

}  // namespace

Status softmax_geometry(const ir::Node& node, const std::vector<int64_t>& shape, SoftmaxGeometry* out) {
  const int rank = static_cast<int>(shape.size());
  const bool flatten = coerces_to_2d(node);
  int64_t axis = 0;
  KILN_RETURN_IF_ERROR(normalize_axis(node.attr_i("axis", flatten ? 1 : -1), rank, &axis));
  SoftmaxGeometry g;
  for (int i = 0; i < rank; ++i) {
    if (i < axis) g.outer *= shape[i];
    else if (i == axis || flatten) g.axis_len *= shape[i];
    else g.inner *= shape[i];
  }
  *out = g;
  return Status::OK();
}

void register_softmax_ops(OpRegistry& r) {
  for (const char* op : {"Softmax", "LogSoftmax", "Hardmax"}) {
    r.add({.op_type = op, .attributes = {"axis"}, .infer = infer_softmax, .cost = softmax_cost});
  }
}

}  // namespace kiln::ops
