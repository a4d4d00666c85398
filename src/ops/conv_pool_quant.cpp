// Quantized convolutions: ConvInteger (int32 accumulators) and QLinearConv (requantized to 8 bits).
// Their window attributes and output shapes are Conv's; only the input slots and dtypes differ.
#include "core/error.h"
#include "ops/conv_pool.h"
#include "ops/shape_util.h"

namespace kiln::ops {

namespace {

const std::initializer_list<DType> kInt8DTypes = {DType::kInt8, DType::kUInt8};

// A zero point or scale: a scalar, or (where `per_channel` is allowed) a 1-D tensor.
Status check_quant_param(const InferContext& ctx, int slot, bool per_channel,
                         std::initializer_list<DType> dtypes) {
  if (!ctx.has_input(slot)) return Status::OK();
  KILN_RETURN_IF_ERROR(expect_dtype(ctx, slot, dtypes));
  const ir::TensorType& t = ctx.input_type(slot);
  const int max_rank = per_channel ? 1 : 0;
  // Rank-1 tensors of one element are accepted as scalars (exporters write them).
  KILN_ENSURE(!t.has_rank() || t.rank() <= max_rank || (t.rank() == 1 && (*t.shape)[0].value == 1),
              "input {} must be a scalar{}, got {}", slot, per_channel ? " or 1-D per output channel" : "",
              t.to_string());
  return Status::OK();
}

Status infer_conv_integer(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(expect_dtype(ctx, 0, kInt8DTypes));
  KILN_RETURN_IF_ERROR(expect_dtype(ctx, 1, kInt8DTypes));
  KILN_RETURN_IF_ERROR(check_quant_param(ctx, 2, false, {ctx.input_type(0).dtype}));
  KILN_RETURN_IF_ERROR(check_quant_param(ctx, 3, true, {ctx.input_type(1).dtype}));
  return infer_conv_shape(ctx, 1, -1, DType::kInt32);
}

Status infer_qlinear_conv(InferContext& ctx) {
  KILN_ENSURE(ctx.num_inputs() >= 8, "QLinearConv needs 8 or 9 inputs, got {}", ctx.num_inputs());
  for (int slot : {1, 2, 3, 4, 5, 6, 7}) KILN_ENSURE(ctx.has_input(slot), "input {} is required", slot);
  KILN_RETURN_IF_ERROR(expect_dtype(ctx, 0, kInt8DTypes));
  KILN_RETURN_IF_ERROR(expect_dtype(ctx, 3, kInt8DTypes));
  KILN_RETURN_IF_ERROR(check_quant_param(ctx, 1, false, {DType::kFloat32}));
  KILN_RETURN_IF_ERROR(check_quant_param(ctx, 2, false, {ctx.input_type(0).dtype}));
  KILN_RETURN_IF_ERROR(check_quant_param(ctx, 4, true, {DType::kFloat32}));
  KILN_RETURN_IF_ERROR(check_quant_param(ctx, 5, true, {ctx.input_type(3).dtype}));
  KILN_RETURN_IF_ERROR(check_quant_param(ctx, 6, false, {DType::kFloat32}));
  KILN_RETURN_IF_ERROR(check_quant_param(ctx, 7, false, kInt8DTypes));
  if (ctx.has_input(8)) KILN_RETURN_IF_ERROR(expect_dtype(ctx, 8, {DType::kInt32}));
  return infer_conv_shape(ctx, 3, 8, ctx.input_type(7).dtype);
}

}  // namespace

void register_conv_quant_ops(OpRegistry& r) {
  const std::vector<std::string> attrs = {"auto_pad",  "kernel_shape", "strides",
                                          "dilations", "pads",         "group"};
  r.add({.op_type = "ConvInteger",
         .attributes = attrs,
         .infer = infer_conv_integer,
         .cost = [](const CostContext& c) { return conv_cost(c, 1); }});
  r.add({.op_type = "QLinearConv",
         .attributes = attrs,
         .infer = infer_qlinear_conv,
         .cost = [](const CostContext& c) { return conv_cost(c, 3); }});
}

}  // namespace kiln::ops
