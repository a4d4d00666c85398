// Normalization ops: schemas for BatchNormalization, InstanceNormalization,
// LayerNormalization, GroupNormalization, LpNormalization and MeanVarianceNormalization.
#include "core/error.h"
#include "ops/op_schema.h"
#include "ops/shape_util.h"

namespace kiln::ops {
namespace {

Status expect_ieee_float(const InferContext& ctx, int i) {
  return expect_dtype(ctx, i, {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16});
}

// Checks that an optional per-channel parameter (input i) has `count` elements when its
// shape is known.
Status expect_param_count(const InferContext& ctx, int i, const char* what, ir::Dim count) {
  if (!ctx.has_input(i)) return Status::OK();
  const auto& t = ctx.input_type(i);
  if (!t.is_concrete() || !count.known()) return Status::OK();
  int64_t n = 1;
  for (int64_t d : t.concrete()) n *= d;
  KILN_ENSURE(n == count.value, "{} (input {}) has {} elements, expected {}", what, i, n, count.value);
  return Status::OK();
}

// Element count of x's dims [from, rank); unknown when any of them is.
ir::Dim dims_product(const ir::TensorType& x, int from) {
  int64_t n = 1;
  for (int i = from; i < x.rank(); ++i) {
    if (!(*x.shape)[i].known()) return ir::Dim();
    n *= (*x.shape)[i].value;
  }
  return ir::Dim(n);
}

Status infer_batch_norm(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(expect_ieee_float(ctx, 0));
  const auto& x = ctx.input_type(0);
  if (x.has_rank()) {
    KILN_ENSURE(x.rank() >= 2, "BatchNormalization needs an input of rank >= 2 (N, C, ...), got {}", x.to_string());
    // Parameters are per channel, or (opset 7 spatial=0) per channel and spatial position.
    const ir::Dim c = (*x.shape)[1];
    const bool spatial = ctx.node.attr_i("spatial", 1) != 0;
    const ir::Dim count = spatial ? c : dims_product(x, 1);
    for (int i = 1; i < 5; ++i) {
      KILN_ENSURE(ctx.has_input(i), "BatchNormalization needs 5 inputs, input {} is missing", i);
      KILN_RETURN_IF_ERROR(expect_param_count(ctx, i, "a parameter", count));
    }
  }
  same_as_input(ctx, 0, 0);
  // Running (opset 14+) or batch (older) mean and variance follow the mean/var inputs.
  for (int i = 1; i < ctx.num_outputs(); ++i) same_as_input(ctx, i, i < 3 ? i + 2 : i);
  return Status::OK();
}

Status canonicalize_batch_norm(ir::Node& node, ir::Graph&) {
  // Before opset 14 training mode was implied by asking for the extra outputs.
  if (node.opset < 14) {
    bool extra = false;
    for (size_t i = 1; i < node.outputs.size(); ++i) extra |= node.outputs[i] != nullptr;
    ir::Attribute a;
    a.kind = ir::Attribute::Kind::kInt;
    a.i = extra ? 1 : 0;
    node.attrs["training_mode"] = a;
  } else if (node.attr_i("training_mode", 0) == 0) {
    for (size_t i = 1; i < node.outputs.size(); ++i) {
      if (node.outputs[i]) return invalid_argument("running mean/var outputs need training_mode=1");
    }
  }
  return Status::OK();
}

// Instance and group normalization: X is (N, C, ...); scale and bias have `count` elements.
Status infer_channel_norm(InferContext& ctx, bool group) {
  KILN_RETURN_IF_ERROR(expect_ieee_float(ctx, 0));
  const auto& x = ctx.input_type(0);
  if (x.has_rank()) {
    KILN_ENSURE(x.rank() >= 2, "{} needs an input of rank >= 2 (N, C, ...), got {}", ctx.node.op_type, x.to_string());
    ir::Dim count = (*x.shape)[1];
    if (group) {
      const int64_t groups = ctx.node.attr_i("num_groups", 0);
      KILN_ENSURE(groups > 0, "num_groups must be positive, got {}", groups);
      if (count.known()) KILN_ENSURE(count.value % groups == 0, "{} channels do not split into {} groups", count.value, groups);
      if (ctx.node.opset < 21) count = ir::Dim(groups);  // opset 18: one scale/bias per group
    }
    KILN_RETURN_IF_ERROR(expect_param_count(ctx, 1, "scale", count));
    KILN_RETURN_IF_ERROR(expect_param_count(ctx, 2, "bias", count));
  }
  same_as_input(ctx, 0, 0);
  return Status::OK();
}

Status infer_layer_norm(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(expect_ieee_float(ctx, 0));
  same_as_input(ctx, 0, 0);
  const DType stash = dtype_from_onnx(static_cast<int>(ctx.node.attr_i("stash_type", 1)));
  KILN_ENSURE(stash == DType::kFloat32 || stash == DType::kFloat64 || stash == DType::kFloat16 ||
                  stash == DType::kBFloat16,
              "stash_type {} is not a floating-point type", ctx.node.attr_i("stash_type", 1));
  const auto& x = ctx.input_type(0);
  std::optional<std::vector<ir::Dim>> stat_shape;
  if (x.has_rank()) {
    int64_t axis = 0;
    KILN_RETURN_IF_ERROR(normalize_axis(ctx.node.attr_i("axis", -1), x.rank(), &axis));
    std::vector<ir::Dim> s(x.shape->begin(), x.shape->begin() + axis);
    s.resize(x.rank(), ir::Dim(1));
    stat_shape = std::move(s);
  }
  set_output(ctx, 1, stash, stat_shape);
  set_output(ctx, 2, stash, stat_shape);
  return Status::OK();
}

Status infer_lp_norm(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(expect_ieee_float(ctx, 0));
  const int64_t p = ctx.node.attr_i("p", 2);
  if (p != 1 && p != 2) return unsupported("LpNormalization supports p = 1 or 2, got {}", p);
  const auto& x = ctx.input_type(0);
  if (x.has_rank()) {
    int64_t axis = 0;
    KILN_RETURN_IF_ERROR(normalize_axis(ctx.node.attr_i("axis", -1), x.rank(), &axis));
  }
  same_as_input(ctx, 0, 0);
  return Status::OK();
}

Status infer_mvn(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(expect_ieee_float(ctx, 0));
  const auto& x = ctx.input_type(0);
  if (x.has_rank()) {
    for (int64_t a : ctx.node.attr_ints("axes", {0, 2, 3})) {
      int64_t axis = 0;
      KILN_RETURN_IF_ERROR(normalize_axis(a, x.rank(), &axis));
    }
  }
  same_as_input(ctx, 0, 0);
  return Status::OK();
}

}  // namespace

void register_norm_ops(OpRegistry& r) {
  r.add({.op_type = "BatchNormalization",
         .attributes = {"epsilon", "momentum", "spatial", "training_mode"},
         .canonicalize = canonicalize_batch_norm,
         .infer = infer_batch_norm});
  r.add({.op_type = "InstanceNormalization",
         .attributes = {"epsilon"},
         .infer = [](InferContext& ctx) { return infer_channel_norm(ctx, false); }});
  r.add({.op_type = "GroupNormalization",
         .attributes = {"epsilon", "num_groups", "stash_type"},
         .infer = [](InferContext& ctx) { return infer_channel_norm(ctx, true); }});
  r.add({.op_type = "LayerNormalization", .attributes = {"axis", "epsilon", "stash_type"}, .infer = infer_layer_norm});
  r.add({.op_type = "LpNormalization", .attributes = {"axis", "p"}, .infer = infer_lp_norm});
  r.add({.op_type = "MeanVarianceNormalization", .attributes = {"axes"}, .infer = infer_mvn});
}

}  // namespace kiln::ops
