// Type conversion and linear (de)quantization ops: Cast, CastLike, QuantizeLinear,
// DequantizeLinear. Schemas only; the element conversions live in the kernels.
#include "ops/cast_quant.h"

#include <algorithm>

#include "core/error.h"
#include "ops/op_schema.h"
#include "ops/shape_util.h"

namespace kiln::ops {

Status resolve_quant_layout(const ir::Node& node, const std::vector<int64_t>& x_shape,
                            const std::vector<int64_t>& scale_shape, QuantLayout* out) {
  QuantLayout l;
  const int rank = static_cast<int>(x_shape.size());
  const int64_t block_size = node.attr_i("block_size", 0);
  if (block_size < 0) return invalid_argument("block_size must not be negative, got {}", block_size);
  const int64_t scale_numel = Tensor::numel_of(scale_shape);
  if (scale_numel == 1 && scale_shape.size() <= 1) {
    l.inner = Tensor::numel_of(x_shape);
    *out = l;
    return Status::OK();
  }
  int64_t axis = 0;
  KILN_RETURN_IF_ERROR(normalize_axis(node.attr_i("axis", 1), rank, &axis));
  l.axis = static_cast<int>(axis);
  for (int d = 0; d < l.axis; ++d) l.outer *= x_shape[d];
  l.axis_dim = x_shape[l.axis];
  for (int d = l.axis + 1; d < rank; ++d) l.inner *= x_shape[d];
  if (block_size == 0) {
    l.kind = QuantLayout::Kind::kPerAxis;
    if (scale_shape.size() != 1 || scale_shape[0] != l.axis_dim) {
      return invalid_argument("per-axis scale must be 1-D of length {} (input dim {}), got shape {}", l.axis_dim,
                              l.axis, shape_to_string(scale_shape));
    }
  } else {
    l.kind = QuantLayout::Kind::kBlocked;
    l.block_size = block_size;
    l.scale_axis_dim = (l.axis_dim + block_size - 1) / block_size;
    std::vector<int64_t> want = x_shape;
    want[l.axis] = l.scale_axis_dim;
    if (scale_shape != want) {
      return invalid_argument("blocked scale for input {} with block_size {} on axis {} must have shape {}, got {}",
                              shape_to_string(x_shape), block_size, l.axis, shape_to_string(want),
                              shape_to_string(scale_shape));
    }
  }
  *out = l;
  return Status::OK();
}

namespace {

// The element type an ONNX dtype attribute names; strings and types kiln lacks (int4,
// float8e4m3fnuz, ...) are unsupported rather than invalid, so callers can skip them.
Status dtype_attr(const ir::Node& node, const std::string& name, DType* out) {
  const ir::Attribute* a = node.attr(name);
  if (!a || a->kind != ir::Attribute::Kind::kInt) {
    return invalid_argument("attribute '{}' must be an integer data type", name);
  }
  *out = dtype_from_onnx(static_cast<int>(a->i));
  if (*out == DType::kUndefined) return unsupported("{} = ONNX data type {} is not supported", name, a->i);
  return Status::OK();
}

// `saturate` (opset 19+) only changes float8 results; `round_mode` (opset 25) only changes
// float8e8m0 results, which kiln does not have, so any valid value gives the same output.
Status check_cast_attrs(const ir::Node& node) {
  const int64_t saturate = node.attr_i("saturate", 1);
  if (saturate != 0 && saturate != 1) return invalid_argument("saturate must be 0 or 1, got {}", saturate);
  const std::string round_mode = node.attr_s("round_mode", "up");
  if (round_mode != "up" && round_mode != "down" && round_mode != "nearest") {
    return invalid_argument("round_mode must be 'up', 'down' or 'nearest', got '{}'", round_mode);
  }
  return Status::OK();
}

// A malformed model may omit a required input; report it rather than crash.
Status require_inputs(const InferContext& ctx, int n) {
  for (int i = 0; i < n; ++i) {
    if (!ctx.has_input(i)) return invalid_argument("{} needs at least {} inputs; input {} is missing", ctx.node.op_type, n, i);
  }
  return Status::OK();
}

Status infer_cast(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(require_inputs(ctx, 1));
  KILN_RETURN_IF_ERROR(check_cast_attrs(ctx.node));
  DType to = DType::kUndefined;
  KILN_RETURN_IF_ERROR(dtype_attr(ctx.node, "to", &to));
  set_output(ctx, 0, to, ctx.input_type(0).shape);
  return Status::OK();
}

Status infer_cast_like(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(require_inputs(ctx, 2));
  KILN_RETURN_IF_ERROR(check_cast_attrs(ctx.node));
  set_output(ctx, 0, ctx.input_type(1).dtype, ctx.input_type(0).shape);
  return Status::OK();
}

// Checks scale/zero-point shapes against x where all are concrete (static inference may not
// know them; the run-time pass always does).
Status check_quant_shapes(const InferContext& ctx) {
  const ir::TensorType& x = ctx.input_type(0);
  const ir::TensorType& scale = ctx.input_type(1);
  // Scalars may come as shape [] or [1] (the ONNX tests mix them).
  if (ctx.has_input(2) && scale.is_concrete() && ctx.input_type(2).is_concrete() &&
      scale.concrete() != ctx.input_type(2).concrete() &&
      (Tensor::numel_of(scale.concrete()) != 1 || Tensor::numel_of(ctx.input_type(2).concrete()) != 1)) {
    return invalid_argument("zero point shape {} differs from scale shape {}", ctx.input_type(2).to_string(),
                            scale.to_string());
  }
  if (!x.is_concrete() || !scale.is_concrete()) return Status::OK();
  QuantLayout layout;
  return resolve_quant_layout(ctx.node, x.concrete(), scale.concrete(), &layout);
}

bool is_quantized_type(DType t) {
  switch (t) {
    case DType::kInt8:
    case DType::kUInt8:
    case DType::kInt16:
    case DType::kUInt16:
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E5M2:
      return true;
    default:
      return false;
  }
}

// y's type: the zero point's, else `output_dtype`, else uint8.
Status quantize_output_type(const InferContext& ctx, DType* out) {
  DType attr_type = DType::kUndefined;
  if (ctx.node.attr_i("output_dtype", 0) != 0) KILN_RETURN_IF_ERROR(dtype_attr(ctx.node, "output_dtype", &attr_type));
  if (ctx.has_input(2)) {
    *out = ctx.input_type(2).dtype;
    if (attr_type != DType::kUndefined && attr_type != *out) {
      return invalid_argument("output_dtype {} does not match the zero point's type {}", dtype_name(attr_type),
                              dtype_name(*out));
    }
  } else {
    *out = attr_type == DType::kUndefined ? DType::kUInt8 : attr_type;
  }
  if (!is_quantized_type(*out)) return unsupported("QuantizeLinear to {} is not supported", dtype_name(*out));
  return Status::OK();
}

Status infer_quantize(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(require_inputs(ctx, 2));
  const std::initializer_list<DType> x_types = {DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kInt32};
  KILN_RETURN_IF_ERROR(expect_dtype(ctx, 0, x_types));
  KILN_RETURN_IF_ERROR(expect_dtype(ctx, 1, x_types));
  const int64_t saturate = ctx.node.attr_i("saturate", 1);
  if (saturate != 0 && saturate != 1) return invalid_argument("saturate must be 0 or 1, got {}", saturate);
  if (ctx.node.attr_i("precision", 0) != 0) {
    DType precision = DType::kUndefined;
    KILN_RETURN_IF_ERROR(dtype_attr(ctx.node, "precision", &precision));
    if (!dtype_is_float(precision) || dtype_size(precision) == 1) {
      return unsupported("precision {} is not supported", dtype_name(precision));
    }
  }
  DType out = DType::kUndefined;
  KILN_RETURN_IF_ERROR(quantize_output_type(ctx, &out));
  KILN_RETURN_IF_ERROR(check_quant_shapes(ctx));
  set_output(ctx, 0, out, ctx.input_type(0).shape);
  return Status::OK();
}

Status infer_dequantize(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(require_inputs(ctx, 2));
  KILN_RETURN_IF_ERROR(expect_dtype(ctx, 0,
                                    {DType::kInt8, DType::kUInt8, DType::kInt16, DType::kUInt16, DType::kInt32,
                                     DType::kFloat8E4M3FN, DType::kFloat8E5M2}));
  const std::initializer_list<DType> float_types = {DType::kFloat32, DType::kFloat16, DType::kBFloat16};
  KILN_RETURN_IF_ERROR(expect_dtype(ctx, 1, float_types));
  if (ctx.has_input(2) && ctx.input_type(2).dtype != ctx.input_type(0).dtype) {
    return invalid_argument("zero point type {} differs from the input's {}", dtype_name(ctx.input_type(2).dtype),
                            dtype_name(ctx.input_type(0).dtype));
  }
  DType out = ctx.input_type(1).dtype;
  if (ctx.node.attr_i("output_dtype", 0) != 0) KILN_RETURN_IF_ERROR(dtype_attr(ctx.node, "output_dtype", &out));
  if (std::find(float_types.begin(), float_types.end(), out) == float_types.end()) {
    return unsupported("DequantizeLinear to {} is not supported", dtype_name(out));
  }
  KILN_RETURN_IF_ERROR(check_quant_shapes(ctx));
  set_output(ctx, 0, out, ctx.input_type(0).shape);
  return Status::OK();
}

}  // namespace

void register_cast_quant_ops(OpRegistry& r) {
  r.add({.op_type = "Cast", .attributes = {"to", "saturate", "round_mode"}, .infer = infer_cast});
  r.add({.op_type = "CastLike", .attributes = {"saturate", "round_mode"}, .infer = infer_cast_like});
  r.add({.op_type = "QuantizeLinear",
         .attributes = {"axis", "saturate", "block_size", "output_dtype", "precision"},
         .infer = infer_quantize});
  r.add({.op_type = "DequantizeLinear",
         .attributes = {"axis", "block_size", "output_dtype"},
         .infer = infer_dequantize});
}

}  // namespace kiln::ops
