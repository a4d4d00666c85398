// Schemas of the ops that make new tensors from scalars or masks: ConstantOfShape, Range,
// Dropout, Trilu.
#include <cmath>

#include "core/dispatch.h"
#include "core/error.h"
#include "ops/shape_util.h"
#include "ops/tensor.h"

namespace kiln::ops {
Status range_length(const Tensor& start, const Tensor& limit, const Tensor& delta, int64_t* n) {
  KILN_ENSURE(start.numel() == 1 && limit.numel() == 1 && delta.numel() == 1, "Range inputs must be scalars");
  Status st;
  const bool ok = dispatch<RangeTypes>(start.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const C s = static_cast<C>(*start.data_as<T>()), l = static_cast<C>(*limit.data_as<T>());
    const C d = static_cast<C>(*delta.data_as<T>());
    if (d == C(0)) {
      st = invalid_argument("Range delta must not be 0");
    } else if constexpr (std::is_integral_v<C>) {
      // Integer ceil division without going through floating point.
      const int64_t diff = static_cast<int64_t>(l) - static_cast<int64_t>(s), step = static_cast<int64_t>(d);
      *n = (diff > 0) == (step > 0) && diff != 0 ? (std::abs(diff) + std::abs(step) - 1) / std::abs(step) : 0;
    } else {
      const double len =
          std::ceil((static_cast<double>(l) - static_cast<double>(s)) / static_cast<double>(d));
      if (std::isnan(len) || len > 1e15) st = invalid_argument("Range length {} is not valid", len);
      *n = len > 0 && st.ok() ? static_cast<int64_t>(len) : 0;
    }
  });
  if (!ok) return unsupported("Range does not accept {}", dtype_name(start.dtype()));
  return st;
}

namespace {

Status infer_constant_of_shape(InferContext& ctx) {
  const Tensor* value = ctx.node.attr_t("value");
  KILN_ENSURE(!value || value->numel() == 1, "value must have exactly one element, has {}",
              value ? value->numel() : 0);
  const DType dtype = value ? value->dtype() : DType::kFloat32;
  std::vector<int64_t> shape;
  if (!input_ints(ctx, 0, &shape)) {
    const int64_t n = input_length(ctx, 0);
    set_output(ctx, 0, dtype, n >= 0 ? std::optional(unknown_dims(static_cast<int>(n))) : std::nullopt);
    return Status::OK();
  }
  for (int64_t d : shape) KILN_ENSURE(d >= 0, "shape {} has a negative dim", shape_to_string(shape));
  set_output(ctx, 0, dtype, std::vector<ir::Dim>(shape.begin(), shape.end()));
  return Status::OK();
}

Status infer_range(InferContext& ctx) {
  const DType dtype = ctx.input_type(0).dtype;
  for (int i = 0; i < 3; ++i) {
    KILN_ENSURE(ctx.has_input(i), "Range needs start, limit and delta");
    KILN_ENSURE(ctx.input_type(i).dtype == dtype, "Range inputs have different dtypes");
    KILN_ENSURE(!ctx.input_type(i).has_rank() || ctx.input_type(i).rank() == 0 ||
                    (ctx.input_type(i).rank() == 1 && (*ctx.input_type(i).shape)[0] == ir::Dim(1)),
                "Range input {} must be a scalar", i);
  }
  ir::Dim n;
  if (ctx.input_value(0) && ctx.input_value(1) && ctx.input_value(2)) {
    int64_t len = 0;
    KILN_RETURN_IF_ERROR(range_length(*ctx.input_value(0), *ctx.input_value(1), *ctx.input_value(2), &len));
    n = len;
  }
  set_output(ctx, 0, dtype, std::vector<ir::Dim>{n});
  return Status::OK();
}

Status infer_dropout(InferContext& ctx) {
  const ir::TensorType& in = ctx.input_type(0);
  KILN_ENSURE(dtype_is_float(in.dtype), "Dropout needs a float input, got {}", dtype_name(in.dtype));
  same_as_input(ctx, 0, 0);
  // The mask is bool from opset 10 on; before it has the data's type.
  set_output(ctx, 1, ctx.node.opset < 10 ? in.dtype : DType::kBool, in.shape);
  const Tensor* ratio = ctx.input_value(1);
  if (ratio) {
    std::vector<double> r;
    KILN_RETURN_IF_ERROR(tensor_to_doubles(*ratio, &r));
    KILN_ENSURE(r.size() == 1 && r[0] >= 0 && r[0] < 1, "ratio must be a scalar in [0, 1)");
  }
  return Status::OK();
}

Status canonicalize_dropout(ir::Node& node, ir::Graph& g) {
  // Opset < 12 gives the ratio as an attribute and always runs in inference mode.
  if (node.has_attr("ratio")) {
    Tensor v(DType::kFloat32, {});
    *v.data_as<float>() = node.attr_f("ratio", 0.5f);
    attribute_to_input(node, g, "ratio", 1, v);
  }
  if (node.attr_i("is_test", 1) == 0)
    return unsupported("Dropout with is_test=0 (training) is not supported");
  node.attrs.erase("is_test");
  node.attrs.erase("consumed_inputs");
  return Status::OK();
}

Status infer_trilu(InferContext& ctx) {
  const ir::TensorType& in = ctx.input_type(0);
  KILN_ENSURE(!in.has_rank() || in.rank() >= 2, "Trilu needs a tensor of rank >= 2, got {}", in.to_string());
  if (ctx.has_input(1) && ctx.input_value(1)) {
    KILN_ENSURE(ctx.input_value(1)->numel() == 1, "k must be a scalar");
  }
  same_as_input(ctx, 0, 0);
  return Status::OK();
}

}  // namespace

void register_tensor_generate_ops(OpRegistry& r) {
  r.add({.op_type = "ConstantOfShape",
         .attributes = {"value"},
         .infer = infer_constant_of_shape,
         .cost = movement_cost});
  r.add({.op_type = "Range", .attributes = {}, .infer = infer_range, .cost = movement_cost});
  r.add({.op_type = "Dropout",
         .attributes = {"seed", "ratio", "is_test", "consumed_inputs"},
         .canonicalize = canonicalize_dropout,
         .infer = infer_dropout});
  r.add({.op_type = "Trilu", .attributes = {"upper"}, .infer = infer_trilu, .cost = movement_cost});
}

}  // namespace kiln::ops
