// Schemas of the "kiln" domain ops the -O2 fusion passes create (src/passes/fuse_*.cpp):
//
//   kiln.FusedConv(X, W, B?, Z?)  Y = act(conv(X, W) + B + Z)
//     Conv's attributes, plus activation/activation_params (ops/activation.h) and
//     channels_last (0/1): with 1, X, Z and Y are (N, spatial..., C); W keeps ONNX's
//     [M, C/group, k...] layout in both cases (a GPU backend re-lays weights itself).
//   kiln.FusedGemm(A, B, C?)      Y = act(alpha * A'B' + beta * C)
//     Gemm's attributes plus activation/activation_params.
//
// Shape inference defers to Conv's (infer_conv_shape, so the window resolution is the same)
// and to the registered Gemm schema; only the layout and the epilogue inputs are checked here.
#include <algorithm>

#include "core/error.h"
#include "ops/activation.h"
#include "ops/conv_pool.h"
#include "ops/op_schema.h"
#include "ops/shape_util.h"

namespace kiln::ops {
namespace {

const std::initializer_list<DType> kFusedDTypes = {DType::kFloat32, DType::kFloat16, DType::kBFloat16};

// (N, spatial..., C) -> (N, C, spatial...) and back, for types whose rank is known.
ir::TensorType channels_first_type(const ir::TensorType& t) {
  if (!t.has_rank() || t.rank() < 2) return t;
  std::vector<ir::Dim> d = *t.shape;
  std::rotate(d.begin() + 1, d.end() - 1, d.end());
  return {t.dtype, std::move(d)};
}

ir::TensorType channels_last_type(const ir::TensorType& t) {
  if (!t.has_rank() || t.rank() < 2) return t;
  std::vector<ir::Dim> d = *t.shape;
  std::rotate(d.begin() + 1, d.begin() + 2, d.end());
  return {t.dtype, std::move(d)};
}

Status check_same_dtype(const InferContext& ctx, int i, const char* what) {
  if (!ctx.has_input(i)) return Status::OK();
  const DType t = ctx.input_type(0).dtype;
  KILN_ENSURE(ctx.input_type(i).dtype == t, "{} has dtype {}, expected {} like the first input", what,
              dtype_name(ctx.input_type(i).dtype), dtype_name(t));
  return Status::OK();
}

// The residual Z must have Y's shape exactly (the fusion never broadcasts it).
Status check_residual(const InferContext& ctx) {
  if (!ctx.has_input(3)) return Status::OK();
  const ir::TensorType& z = ctx.input_type(3);
  const ir::TensorType& y = ctx.output_types[0];
  if (!z.has_rank() || !y.has_rank()) return Status::OK();
  KILN_ENSURE(z.rank() == y.rank(), "residual Z {} must have the output's shape {}", z.to_string(), y.to_string());
  for (int i = 0; i < z.rank(); ++i) {
    const ir::Dim& a = (*z.shape)[i];
    const ir::Dim& b = (*y.shape)[i];
    KILN_ENSURE(!a.known() || !b.known() || a.value == b.value, "residual Z {} must have the output's shape {}",
                z.to_string(), y.to_string());
  }
  return Status::OK();
}

Status infer_fused_conv(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(expect_dtype(ctx, 0, kFusedDTypes));
  KILN_RETURN_IF_ERROR(check_same_dtype(ctx, 1, "W"));
  KILN_RETURN_IF_ERROR(check_same_dtype(ctx, 2, "bias B"));
  KILN_RETURN_IF_ERROR(check_same_dtype(ctx, 3, "residual Z"));
  Activation act;
  KILN_RETURN_IF_ERROR(activation_of(ctx.node, &act));
  const int64_t channels_last = ctx.node.attr_i("channels_last", 0);
  KILN_ENSURE(channels_last == 0 || channels_last == 1, "channels_last must be 0 or 1, got {}", channels_last);
  if (!channels_last) {
    KILN_RETURN_IF_ERROR(infer_conv_shape(ctx, 1, 2, ctx.input_type(0).dtype));
    return check_residual(ctx);
  }
  // Infer as the channels-first Conv would, then permute the output back.
  const ir::TensorType x = channels_first_type(ctx.input_type(0));
  InferContext nchw{ctx.node, {&x, ctx.input_types[1], ctx.has_input(2) ? ctx.input_types[2] : nullptr}, {}, {}, {}};
  nchw.output_types.resize(1);
  KILN_RETURN_IF_ERROR(infer_conv_shape(nchw, 1, 2, x.dtype));
  set_output(ctx, 0, x.dtype, channels_last_type(nchw.output_types[0]).shape);
  return check_residual(ctx);
}

Cost fused_conv_cost(const CostContext& c) {
  Cost cost = conv_cost(c, 1);
  const std::vector<int64_t> y = c.output_types[0]->concrete();
  cost.flops += static_cast<double>(Tensor::numel_of(y));  // the epilogue, about one op per element
  return cost;
}

const OpSchema& gemm_schema() {
  const OpSchema* s = OpRegistry::instance().find("", "Gemm");
  KILN_ASSERT(s != nullptr, "kiln.FusedGemm needs the Gemm schema");
  return *s;
}

Status infer_fused_gemm(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(expect_dtype(ctx, 0, kFusedDTypes));
  Activation act;
  KILN_RETURN_IF_ERROR(activation_of(ctx.node, &act));
  return gemm_schema().infer(ctx);
}

Cost fused_gemm_cost(const CostContext& c) {
  Cost cost = gemm_schema().cost(c);
  cost.flops += static_cast<double>(Tensor::numel_of(c.output_types[0]->concrete()));
  return cost;
}

}  // namespace

void register_fused_ops(OpRegistry& r) {
  r.add({.op_type = "FusedConv",
         .domain = "kiln",
         .attributes = {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides", "activation",
                        "activation_params", "channels_last"},
         .infer = infer_fused_conv,
         .cost = fused_conv_cost});
  r.add({.op_type = "FusedGemm",
         .domain = "kiln",
         .attributes = {"alpha", "beta", "transA", "transB", "activation", "activation_params"},
         .infer = infer_fused_gemm,
         .cost = fused_gemm_cost});
}

}  // namespace kiln::ops
