// RoiAlign and MaxUnpool schemas.
#include "core/error.h"
#include "ops/extra_vision.h"
#include "ops/shape_util.h"

namespace kiln::ops {
namespace {

Status infer_roi_align(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(expect_dtype(ctx, 0, {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16}));
  KILN_ENSURE(ctx.input_type(1).dtype == ctx.input_type(0).dtype, "RoiAlign rois must have X's dtype");
  KILN_RETURN_IF_ERROR(expect_dtype(ctx, 2, {DType::kInt64}));
  const std::string mode = ctx.node.attr_s("mode", "avg");
  KILN_ENSURE(mode == "avg" || mode == "max", "RoiAlign mode must be avg or max, got '{}'", mode);
  const std::string ctm = ctx.node.attr_s("coordinate_transformation_mode", "half_pixel");
  KILN_ENSURE(ctm == "half_pixel" || ctm == "output_half_pixel",
              "coordinate_transformation_mode must be half_pixel or output_half_pixel, got '{}'", ctm);
  const int64_t oh = ctx.node.attr_i("output_height", 1), ow = ctx.node.attr_i("output_width", 1);
  KILN_ENSURE(oh > 0 && ow > 0, "RoiAlign output size must be positive, got {}x{}", oh, ow);
  const auto& x = ctx.input_type(0);
  const auto& rois = ctx.input_type(1);
  if (x.has_rank()) KILN_ENSURE(x.rank() == 4, "RoiAlign X must be [N, C, H, W], got {}", x.to_string());
  if (rois.has_rank()) KILN_ENSURE(rois.rank() == 2, "RoiAlign rois must be [num_rois, 4], got {}", rois.to_string());
  const ir::Dim n = rois.has_rank() ? (*rois.shape)[0] : ir::Dim();
  const ir::Dim c = x.has_rank() ? (*x.shape)[1] : ir::Dim();
  set_output(ctx, 0, x.dtype, std::vector<ir::Dim>{n, c, ir::Dim(oh), ir::Dim(ow)});
  return Status::OK();
}

// Opset 10 had no coordinate_transformation_mode; it behaved as output_half_pixel.
Status canonicalize_roi_align(ir::Node& node, ir::Graph&) {
  if (node.opset < 16 && !node.attrs.count("coordinate_transformation_mode")) {
    ir::Attribute a;
    a.kind = ir::Attribute::Kind::kString;
    a.s = "output_half_pixel";
    node.attrs["coordinate_transformation_mode"] = a;
  }
  return Status::OK();
}

Status infer_max_unpool(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(expect_dtype(ctx, 0, {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16}));
  KILN_RETURN_IF_ERROR(expect_dtype(ctx, 1, {DType::kInt64}));
  const auto& x = ctx.input_type(0);
  const std::vector<int64_t> kernel = ctx.node.attr_ints("kernel_shape");
  KILN_ENSURE(!kernel.empty(), "MaxUnpool needs kernel_shape");
  const size_t sp = kernel.size();
  const std::vector<int64_t> strides = ctx.node.attr_ints("strides", std::vector<int64_t>(sp, 1));
  const std::vector<int64_t> pads = ctx.node.attr_ints("pads", std::vector<int64_t>(2 * sp, 0));
  KILN_ENSURE(strides.size() == sp && pads.size() == 2 * sp, "MaxUnpool strides/pads do not match kernel_shape");
  if (x.has_rank()) KILN_ENSURE(x.rank() == static_cast<int>(sp) + 2, "MaxUnpool X {} does not match a {}-D kernel", x.to_string(), sp);
  if (ctx.has_input(2)) {
    // An explicit output shape wins; known only when its value is.
    const Tensor* v = ctx.input_value(2);
    if (!v) {
      set_output(ctx, 0, x.dtype, x.has_rank() ? std::optional(std::vector<ir::Dim>(x.rank())) : std::nullopt);
      return Status::OK();
    }
    std::vector<int64_t> shape;
    KILN_RETURN_IF_ERROR(tensor_to_ints(*v, &shape));
    set_output(ctx, 0, x.dtype, std::vector<ir::Dim>(shape.begin(), shape.end()));
    return Status::OK();
  }
  if (!x.has_rank()) {
    set_output(ctx, 0, x.dtype, std::nullopt);
    return Status::OK();
  }
  std::vector<ir::Dim> s = *x.shape;
  for (size_t i = 0; i < sp; ++i) {
    const ir::Dim d = s[i + 2];
    s[i + 2] = d.known() ? ir::Dim((d.value - 1) * strides[i] + kernel[i] - pads[i] - pads[i + sp]) : ir::Dim();
  }
  set_output(ctx, 0, x.dtype, std::move(s));
  return Status::OK();
}

}  // namespace

void register_extra_vision_pool_ops(OpRegistry& r) {
  r.add({"RoiAlign",
         "",
         {"coordinate_transformation_mode", "mode", "output_height", "output_width", "sampling_ratio", "spatial_scale"},
         canonicalize_roi_align,
         infer_roi_align,
         nullptr});
  r.add({"MaxUnpool", "", {"kernel_shape", "pads", "strides"}, nullptr, infer_max_unpool, nullptr});
}

}  // namespace kiln::ops
