// Ops added for quantized models and recent transformer exports: DynamicQuantizeLinear,
// QLinearMatMul, RMSNormalization (23), RotaryEmbedding (23) and Swish (24).
#include "core/error.h"
#include "ops/op_schema.h"
#include "ops/shape_util.h"

namespace kiln::ops {

namespace {

Status infer_dynamic_quantize_linear(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(expect_dtype(ctx, 0, {DType::kFloat32}));
  const ir::TensorType& x = ctx.input_type(0);
  set_output(ctx, 0, DType::kUInt8, x.shape);
  if (ctx.num_outputs() > 1) set_output(ctx, 1, DType::kFloat32, std::vector<ir::Dim>{});
  if (ctx.num_outputs() > 2) set_output(ctx, 2, DType::kUInt8, std::vector<ir::Dim>{});
  return Status::OK();
}

// A scale or zero point: a scalar or a 1-D tensor (per row of A / per column of B).
Status check_qparam(const InferContext& ctx, int slot, std::initializer_list<DType> dtypes) {
  KILN_ENSURE(ctx.has_input(slot), "input {} is required", slot);
  KILN_RETURN_IF_ERROR(expect_dtype(ctx, slot, dtypes));
  return Status::OK();  // the element count (1, rows or columns) is checked by the kernel
}

// The output shape is MatMul's; borrowing MatMul's inference (with a float view of the
// operands, since MatMul rejects 8-bit types) keeps the numpy-matmul rules in one place.
Status infer_qlinear_matmul(InferContext& ctx) {
  KILN_ENSURE(ctx.num_inputs() == 8, "QLinearMatMul needs 8 inputs, got {}", ctx.num_inputs());
  const std::initializer_list<DType> q_types = {DType::kInt8, DType::kUInt8, DType::kFloat8E4M3FN,
                                                DType::kFloat8E5M2};
  const std::initializer_list<DType> scale_types = {DType::kFloat32, DType::kFloat16, DType::kBFloat16};
  for (int slot : {0, 3}) {
    KILN_ENSURE(ctx.has_input(slot), "input {} is required", slot);
    KILN_RETURN_IF_ERROR(expect_dtype(ctx, slot, q_types));
  }
  for (int slot : {1, 4, 6}) KILN_RETURN_IF_ERROR(check_qparam(ctx, slot, scale_types));
  KILN_RETURN_IF_ERROR(check_qparam(ctx, 2, {ctx.input_type(0).dtype}));
  KILN_RETURN_IF_ERROR(check_qparam(ctx, 5, {ctx.input_type(3).dtype}));
  KILN_RETURN_IF_ERROR(check_qparam(ctx, 7, q_types));

  const OpSchema* matmul = OpRegistry::instance().find("", "MatMul");
  KILN_ASSERT(matmul != nullptr, "MatMul schema is not registered");
  ir::TensorType a, b;
  a.dtype = b.dtype = DType::kFloat32;
  a.shape = ctx.input_type(0).shape;
  b.shape = ctx.input_type(3).shape;
  InferContext mm{.node = ctx.node, .input_types = {&a, &b}, .input_values = {nullptr, nullptr},
                  .output_types = std::vector<ir::TensorType>(1), .output_values = {}};
  mm.output_values.resize(1);
  KILN_RETURN_IF_ERROR(matmul->infer(mm));
  set_output(ctx, 0, ctx.input_type(7).dtype, mm.output_types[0].shape);
  return Status::OK();
}

}  // namespace

void register_extra_nn_norm_ops(OpRegistry& r);

void register_extra_nn_ops(OpRegistry& r) {
  r.add({.op_type = "DynamicQuantizeLinear", .attributes = {}, .infer = infer_dynamic_quantize_linear});
  r.add({.op_type = "QLinearMatMul", .attributes = {}, .infer = infer_qlinear_matmul});
  register_extra_nn_norm_ops(r);
}

}  // namespace kiln::ops
