// Resize (and the deprecated Upsample, rewritten into Resize): schema, canonical form and
// output-size arithmetic. The canonical node has inputs (X, roi, scales, sizes) and every
// attribute of opset 18+; older forms are rewritten by canonicalize.
#include "ops/resize.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "core/error.h"
#include "ops/op_schema.h"
#include "ops/shape_util.h"
#include "ops/tensor.h"

namespace kiln::ops {

Status plan_resize(const ir::Node& node, const std::vector<int64_t>& in, const Tensor* roi, const Tensor* scales,
                   const Tensor* sizes, std::vector<ResizeDim>* dims) {
  const int rank = static_cast<int>(in.size());
  std::vector<int64_t> axes;
  if (node.has_attr("axes")) {
    std::set<int64_t> seen;
    for (int64_t a : node.attr_ints("axes")) {
      int64_t axis = 0;
      KILN_RETURN_IF_ERROR(normalize_axis(a, rank, &axis));
      KILN_ENSURE(seen.insert(axis).second, "axis {} is repeated in axes", a);
      axes.push_back(axis);
    }
  } else {
    for (int i = 0; i < rank; ++i) axes.push_back(i);
  }
  const size_t k = axes.size();
  dims->assign(rank, ResizeDim{});
  for (int i = 0; i < rank; ++i) (*dims)[i].in = (*dims)[i].out = in[i];

  if (roi) {
    std::vector<double> r;
    KILN_RETURN_IF_ERROR(tensor_to_doubles(*roi, &r));
    KILN_ENSURE(r.size() == 2 * k, "roi has {} values, expected {} (starts then ends of {} axes)", r.size(), 2 * k, k);
    for (size_t j = 0; j < k; ++j) {
      (*dims)[axes[j]].roi_start = r[j];
      (*dims)[axes[j]].roi_end = r[k + j];
    }
  }
  KILN_ENSURE(!(scales && sizes), "only one of scales and sizes may be given");
  KILN_ENSURE(scales || sizes, "one of scales and sizes must be given");

  if (scales) {
    std::vector<double> s;
    KILN_RETURN_IF_ERROR(tensor_to_doubles(*scales, &s));
    KILN_ENSURE(s.size() == k, "scales has {} values, expected {}", s.size(), k);
    for (size_t j = 0; j < k; ++j) {
      KILN_ENSURE(s[j] > 0 && std::isfinite(s[j]), "scales must be positive and finite, got {}", s[j]);
      ResizeDim& d = (*dims)[axes[j]];
      d.scale = s[j];
      // In float, like the ONNX reference and ONNX Runtime (0.7f * 10 is 7 in float, not 6).
      if (d.in >= 0) d.out = static_cast<int64_t>(std::floor(static_cast<float>(d.in) * static_cast<float>(s[j])));
    }
    return Status::OK();
  }

  std::vector<int64_t> sz;
  KILN_RETURN_IF_ERROR(tensor_to_ints(*sizes, &sz));
  KILN_ENSURE(sz.size() == k, "sizes has {} values, expected {}", sz.size(), k);
  for (int64_t v : sz) KILN_ENSURE(v >= 0, "sizes must not be negative, got {}", v);
  const std::string policy = node.attr_s("keep_aspect_ratio_policy", "stretch");
  if (policy == "stretch") {
    for (size_t j = 0; j < k; ++j) {
      ResizeDim& d = (*dims)[axes[j]];
      d.out = sz[j];
      if (d.in > 0) d.scale = static_cast<double>(sz[j]) / static_cast<double>(d.in);
    }
    return Status::OK();
  }
  // not_larger / not_smaller: one scale for all axes, the smallest / largest of the ratios.
  double scale = policy == "not_larger" ? INFINITY : 0.0;
  for (size_t j = 0; j < k; ++j) {
    const int64_t n = (*dims)[axes[j]].in;
    if (n < 0) {
      for (int64_t a : axes) (*dims)[a] = ResizeDim{.in = (*dims)[a].in, .out = -1, .scale = 0.0};
      return Status::OK();
    }
    KILN_ENSURE(n > 0, "keep_aspect_ratio_policy needs non-empty resized dims");
    const double r = static_cast<double>(sz[j]) / static_cast<double>(n);
    scale = policy == "not_larger" ? std::min(scale, r) : std::max(scale, r);
  }
  for (int64_t a : axes) {
    ResizeDim& d = (*dims)[a];
    d.scale = scale;
    d.out = static_cast<int64_t>(std::floor(scale * static_cast<double>(d.in) + 0.5));  // round half up
  }
  return Status::OK();
}

namespace {

void set_string_attr(ir::Node& node, const std::string& name, const std::string& value) {
  ir::Attribute a;
  a.kind = ir::Attribute::Kind::kString;
  a.s = value;
  node.attrs[name] = std::move(a);
}

Status check_choice(const ir::Node& node, const std::string& attr, const std::string& dflt,
                    std::initializer_list<const char*> allowed) {
  const std::string v = node.attr_s(attr, dflt);
  for (const char* a : allowed) {
    if (v == a) return Status::OK();
  }
  return unsupported("{} '{}' is not supported", attr, v);
}

Status check_resize_attrs(const ir::Node& node) {
  KILN_RETURN_IF_ERROR(check_choice(node, "mode", "nearest", {"nearest", "linear", "cubic"}));
  // "tf_half_pixel_for_nn" existed in opset 11 only; "simple" is kiln's name for the nearest
  // rounding of Resize-10 and Upsample (see canonicalize).
  KILN_RETURN_IF_ERROR(check_choice(node, "coordinate_transformation_mode", "half_pixel",
                                    {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
                                     "asymmetric", "tf_crop_and_resize", "tf_half_pixel_for_nn"}));
  KILN_RETURN_IF_ERROR(check_choice(node, "nearest_mode", "round_prefer_floor",
                                    {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil", "simple"}));
  KILN_RETURN_IF_ERROR(
      check_choice(node, "keep_aspect_ratio_policy", "stretch", {"stretch", "not_larger", "not_smaller"}));
  return Status::OK();
}

// Resize-10 and Upsample take (X, scales) and map coordinates like "asymmetric", rounding
// nearest neighbours down when upsampling and up when downsampling (ONNX Runtime's
// "simple" mode, which the old ONNX tests follow).
void to_resize_11_form(ir::Node& node, ir::Value* scales) {
  node.inputs = {node.input(0), nullptr, scales};
  set_string_attr(node, "coordinate_transformation_mode", "asymmetric");
  set_string_attr(node, "nearest_mode", "simple");
}

Status canonicalize_resize(ir::Node& node, ir::Graph&) {
  if (node.opset < 11) to_resize_11_form(node, node.input(1));
  return check_resize_attrs(node);
}

Status canonicalize_upsample(ir::Node& node, ir::Graph& g) {
  ir::Value* scales = node.input(1);
  if (node.has_attr("scales")) {  // opset 7: scales are an attribute
    const std::vector<float> s = node.attr_floats("scales");
    Tensor t(DType::kFloat32, {static_cast<int64_t>(s.size())});
    std::copy(s.begin(), s.end(), t.data_as<float>());
    attribute_to_input(node, g, "scales", 1, std::move(t));
    scales = node.input(1);
  }
  KILN_ENSURE(scales != nullptr, "Upsample needs scales");
  if (node.attr_s("mode", "nearest") == "bilinear") set_string_attr(node, "mode", "linear");
  node.op_type = "Resize";
  to_resize_11_form(node, scales);
  return check_resize_attrs(node);
}

// An input that is absent or statically known to be an empty tensor.
bool absent(const InferContext& ctx, int i) {
  if (!ctx.has_input(i)) return true;
  const auto& t = ctx.input_type(i);
  if (!t.has_rank()) return false;
  for (const auto& d : *t.shape) {
    if (d.known() && d.value == 0) return true;
  }
  return false;
}

Status infer_resize(InferContext& ctx) {
  const auto& x = ctx.input_type(0);
  if (!x.has_rank()) {
    set_output(ctx, 0, x.dtype, std::nullopt);
    return Status::OK();
  }
  const bool use_roi = ctx.node.attr_s("coordinate_transformation_mode", "half_pixel") == "tf_crop_and_resize";
  const Tensor* roi = absent(ctx, 1) || !use_roi ? nullptr : ctx.input_value(1);
  const Tensor* scales = absent(ctx, 2) ? nullptr : ctx.input_value(2);
  const Tensor* sizes = absent(ctx, 3) ? nullptr : ctx.input_value(3);
  const bool known = (absent(ctx, 2) || scales) && (absent(ctx, 3) || sizes) && (!use_roi || absent(ctx, 1) || roi);
  if (!known) {
    set_output(ctx, 0, x.dtype, std::vector<ir::Dim>(x.rank(), ir::Dim()));
    return Status::OK();
  }
  std::vector<int64_t> in;
  for (const auto& d : *x.shape) in.push_back(d.known() ? d.value : -1);
  std::vector<ResizeDim> dims;
  KILN_RETURN_IF_ERROR(plan_resize(ctx.node, in, roi, scales, sizes, &dims));
  std::vector<ir::Dim> out;
  for (int i = 0; i < x.rank(); ++i) {
    const ir::Dim& d = (*x.shape)[i];
    const bool unchanged = !d.known() && dims[i].out < 0 && dims[i].scale == 1.0;
    out.push_back(unchanged ? d : dims[i].out >= 0 ? ir::Dim(dims[i].out) : ir::Dim());
  }
  set_output(ctx, 0, x.dtype, std::move(out));
  return Status::OK();
}

}  // namespace

void register_resize_ops(OpRegistry& r) {
  r.add({.op_type = "Resize",
         .attributes = {"mode", "coordinate_transformation_mode", "nearest_mode", "cubic_coeff_a", "exclude_outside",
                        "extrapolation_value", "antialias", "axes", "keep_aspect_ratio_policy"},
         .canonicalize = canonicalize_resize,
         .infer = infer_resize});
  r.add({.op_type = "Upsample", .attributes = {"mode", "scales"}, .canonicalize = canonicalize_upsample,
         .infer = infer_resize});
}

}  // namespace kiln::ops
