// Schemas of the ops that grow, crop or re-block spatial dims: Pad, CenterCropPad,
// DepthToSpace, SpaceToDepth.
#include "core/error.h"
#include "ops/shape_util.h"
#include "ops/tensor.h"

namespace kiln::ops {
namespace {

// d + extra, keeping a symbolic dim when nothing is added.
ir::Dim dim_add(const ir::Dim& d, int64_t extra) {
  if (d.known()) return d.value + extra;
  return extra == 0 ? d : ir::Dim();
}

ir::Dim dim_div(const ir::Dim& d, int64_t by) {
  return d.known() ? ir::Dim(d.value / by) : ir::Dim();
}

Status infer_pad(InferContext& ctx) {
  const ir::TensorType& in = ctx.input_type(0);
  PadMode mode;
  KILN_RETURN_IF_ERROR(parse_pad_mode(ctx.node.attr_s("mode", "constant"), &mode));
  if (!in.has_rank()) {
    set_output(ctx, 0, in.dtype, std::nullopt);
    return Status::OK();
  }
  KILN_ENSURE(ctx.has_input(1), "Pad needs pads");
  std::vector<int64_t> pads, axes, begin, end;
  const bool axes_known = !ctx.has_input(3) || input_ints(ctx, 3, &axes);
  if (!input_ints(ctx, 1, &pads) || !axes_known) {
    std::vector<ir::Dim> out = *in.shape;
    std::vector<int64_t> norm;
    if (axes_known && !axes.empty() && normalize_axes(axes, in.rank(), &norm).ok()) {
      for (int64_t a : norm) out[a] = ir::Dim();
    } else {
      out = unknown_dims(in.rank());
    }
    set_output(ctx, 0, in.dtype, out);
    return Status::OK();
  }
  KILN_RETURN_IF_ERROR(resolve_pads(in.rank(), pads, axes, &begin, &end));
  std::vector<ir::Dim> out;
  for (int i = 0; i < in.rank(); ++i) {
    const ir::Dim& d = (*in.shape)[i];
    out.push_back(dim_add(d, begin[i] + end[i]));
    KILN_ENSURE(!out.back().known() || out.back().value >= 0, "pads remove more than dim {} has", i);
    if (mode != PadMode::kConstant && d.known() && d.value == 0) {
      KILN_ENSURE(begin[i] <= 0 && end[i] <= 0, "cannot pad an empty dim {} in a non-constant mode", i);
    }
  }
  set_output(ctx, 0, in.dtype, out);
  return Status::OK();
}

Status canonicalize_pad(ir::Node& node, ir::Graph& g) {
  // Opset < 11 gives pads and the (float) value as attributes; the kernel converts the value
  // to the data's dtype, which may not be known yet while importing.
  for (const char* name : {"pads", "paddings"}) {  // opset 1 calls them paddings
    if (!node.has_attr(name)) continue;
    const float value = node.attr_f("value", 0.0f);
    attribute_to_input(node, g, name, 1, ints_to_tensor(node.attr_ints(name)));
    Tensor v(DType::kFloat32, {});
    *v.data_as<float>() = value;
    attribute_to_input(node, g, "value", 2, v);
  }
  return Status::OK();
}

Status infer_center_crop_pad(InferContext& ctx) {
  const ir::TensorType& in = ctx.input_type(0);
  std::vector<int64_t> shape;
  if (!in.has_rank() || !input_ints(ctx, 1, &shape)) {
    set_output(ctx, 0, in.dtype, in.has_rank() ? std::optional(unknown_dims(in.rank())) : std::nullopt);
    return Status::OK();
  }
  std::vector<int64_t> axes = ctx.node.attr_ints("axes");
  if (axes.empty()) {
    for (int i = 0; i < in.rank(); ++i) axes.push_back(i);
  }
  std::vector<int64_t> norm;
  KILN_RETURN_IF_ERROR(normalize_axes(axes, in.rank(), &norm));
  KILN_ENSURE(shape.size() == norm.size(), "shape has {} entries for {} axes", shape.size(), norm.size());
  std::vector<ir::Dim> out = *in.shape;
  for (size_t i = 0; i < norm.size(); ++i) {
    KILN_ENSURE(shape[i] >= 0, "shape must not be negative");
    out[norm[i]] = shape[i];
  }
  set_output(ctx, 0, in.dtype, out);
  return Status::OK();
}

int64_t blocksize(const InferContext& ctx) {
  return ctx.node.attr_i("blocksize", 0);
}

Status infer_depth_to_space(InferContext& ctx) {
  const ir::TensorType& in = ctx.input_type(0);
  const int64_t b = blocksize(ctx);
  KILN_ENSURE(b > 0, "blocksize must be positive");
  const std::string mode = ctx.node.attr_s("mode", "DCR");
  KILN_ENSURE(mode == "DCR" || mode == "CRD", "mode '{}' is not DCR or CRD", mode);
  if (!in.has_rank()) {
    set_output(ctx, 0, in.dtype, unknown_dims(4));
    return Status::OK();
  }
  KILN_ENSURE(in.rank() == 4, "input must be 4-D, got {}", in.to_string());
  const auto& s = *in.shape;
  KILN_ENSURE(!s[1].known() || s[1].value % (b * b) == 0, "channels {} are not divisible by blocksize^2",
              s[1].value);
  set_output(
      ctx, 0, in.dtype,
      std::vector<ir::Dim>{s[0], dim_div(s[1], b * b), dim_product({s[2], b}), dim_product({s[3], b})});
  return Status::OK();
}

Status infer_space_to_depth(InferContext& ctx) {
  const ir::TensorType& in = ctx.input_type(0);
  const int64_t b = blocksize(ctx);
  KILN_ENSURE(b > 0, "blocksize must be positive");
  if (!in.has_rank()) {
    set_output(ctx, 0, in.dtype, unknown_dims(4));
    return Status::OK();
  }
  KILN_ENSURE(in.rank() == 4, "input must be 4-D, got {}", in.to_string());
  const auto& s = *in.shape;
  for (int i = 2; i < 4; ++i) {
    KILN_ENSURE(!s[i].known() || s[i].value % b == 0, "dim {} ({}) is not divisible by blocksize", i,
                s[i].value);
  }
  set_output(ctx, 0, in.dtype,
             std::vector<ir::Dim>{s[0], dim_product({s[1], b * b}), dim_div(s[2], b), dim_div(s[3], b)});
  return Status::OK();
}

}  // namespace

void register_tensor_pad_ops(OpRegistry& r) {
  r.add({.op_type = "Pad",
         .attributes = {"mode", "pads", "paddings", "value"},
         .canonicalize = canonicalize_pad,
         .infer = infer_pad,
         .cost = movement_cost});
  r.add({.op_type = "CenterCropPad",
         .attributes = {"axes"},
         .infer = infer_center_crop_pad,
         .cost = movement_cost});
  r.add({.op_type = "DepthToSpace",
         .attributes = {"blocksize", "mode"},
         .infer = infer_depth_to_space,
         .cost = movement_cost});
  r.add({.op_type = "SpaceToDepth",
         .attributes = {"blocksize"},
         .infer = infer_space_to_depth,
         .cost = movement_cost});
}

}  // namespace kiln::ops
