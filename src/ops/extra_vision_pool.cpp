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

}  // namespace

void register_extra_vision_pool_ops(OpRegistry& r) {
  r.add({"RoiAlign",
         "",
         {"coordinate_transformation_mode", "mode", "output_height", "output_width", "sampling_ratio", "spatial_scale"},
         canonicalize_roi_align,
         infer_roi_align,
         nullptr});
}

}  // namespace kiln::ops
