#include "ops/resize_taps.h"

#include <algorithm>
#include <cmath>

namespace kiln::ops {

ResizeOptions resize_options(const ir::Node& node) {
  ResizeOptions o;
  o.mode = node.attr_s("mode", "nearest");
  o.ctm = node.attr_s("coordinate_transformation_mode", "half_pixel");
  o.nearest_mode = node.attr_s("nearest_mode", "round_prefer_floor");
  o.cubic_a = node.attr_f("cubic_coeff_a", -0.75f);
  o.exclude_outside = node.attr_i("exclude_outside", 0) != 0;
  o.antialias = node.attr_i("antialias", 0) != 0;
  return o;
}

namespace {

// The input coordinate that output coordinate x maps to.
double original_coordinate(const ResizeOptions& o, int64_t xi, const ResizeDim& d) {
  const double x = static_cast<double>(xi), s = d.scale, in = static_cast<double>(d.in);
  const double out_width = s * in;  // the reference uses the unrounded output width
  if (o.ctm == "half_pixel") return (x + 0.5) / s - 0.5;
  if (o.ctm == "half_pixel_symmetric") {
    const double adjustment = static_cast<double>(d.out) / out_width;
    const double center = in / 2;
    return center * (1 - adjustment) + (x + 0.5) / s - 0.5;
  }
  if (o.ctm == "pytorch_half_pixel") return out_width == 1 ? -0.5 : (x + 0.5) / s - 0.5;
  if (o.ctm == "align_corners") return out_width == 1 ? 0.0 : x * (in - 1) / (out_width - 1);
  if (o.ctm == "asymmetric") return x / s;
  if (o.ctm == "tf_half_pixel_for_nn") return (x + 0.5) / s;
  // tf_crop_and_resize
  const double span = (d.roi_end - d.roi_start) * (in - 1);
  return d.roi_start * (in - 1) + (out_width == 1 ? span / 2 : x * span / (out_width - 1));
}

int64_t nearest_index(const ResizeOptions& o, double x, double scale) {
  const double fl = std::floor(x);
  const bool half = x - fl == 0.5;
  if (o.nearest_mode == "round_prefer_floor") return static_cast<int64_t>(half ? fl : std::round(x));
  if (o.nearest_mode == "round_prefer_ceil") return static_cast<int64_t>(half ? fl + 1 : std::round(x));
  if (o.nearest_mode == "floor") return static_cast<int64_t>(fl);
  if (o.nearest_mode == "ceil") return static_cast<int64_t>(std::ceil(x));
  return static_cast<int64_t>(scale < 1 ? std::ceil(x) : fl);  // "simple" (Resize-10, Upsample)
}

double filter(const ResizeOptions& o, double x) {
  x = std::fabs(x);
  if (o.mode == "linear") return std::max(0.0, 1 - x);
  const double a = o.cubic_a;  // Keys cubic convolution
  if (x <= 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  return 0.0;
}

// Linear/cubic taps around x. With antialias, a downscaling axis stretches the filter by
// 1/scale so every input element contributes; weights are normalized to sum to 1.
std::vector<ResizeTap> interpolation_taps(const ResizeOptions& o, double x, const ResizeDim& d) {
  const double s = o.antialias ? std::min(d.scale, 1.0) : 1.0;
  const double support = o.mode == "linear" ? 1.0 : 2.0;
  const auto start = static_cast<int64_t>(std::floor(-support / s) + 1);
  // The left neighbour is strictly below x (ratio in (0, 1]), as in the reference.
  const double fl = std::floor(x);
  const int64_t left = static_cast<int64_t>(fl) - (x == fl ? 1 : 0);
  const double ratio = x - static_cast<double>(left);
  std::vector<ResizeTap> taps;
  double sum = 0;
  for (int64_t i = start; i < 1 - start + 1; ++i) {
    const int64_t pos = left + i;
    double w = filter(o, s * (static_cast<double>(i) - ratio));
    if (o.exclude_outside && (pos < 0 || pos >= d.in)) w = 0;
    sum += w;
    taps.push_back({std::clamp<int64_t>(pos, 0, d.in - 1), w});
  }
  std::vector<ResizeTap> kept;
  for (ResizeTap& t : taps) {
    if (t.weight != 0) kept.push_back({t.index, t.weight / sum});
  }
  return kept;
}

}  // namespace

ResizeAxisTaps resize_axis_taps(const ResizeOptions& o, const ResizeDim& d) {
  ResizeAxisTaps a;
  a.taps.resize(d.out);
  a.outside.assign(d.out, false);
  for (int64_t x = 0; x < d.out; ++x) {
    const double xo = original_coordinate(o, x, d);
    if (o.ctm == "tf_crop_and_resize" && (xo < 0 || xo > static_cast<double>(d.in - 1))) {
      a.outside[x] = true;
    } else if (o.mode == "nearest") {
      a.taps[x] = {{std::clamp<int64_t>(nearest_index(o, xo, d.scale), 0, d.in - 1), 1.0}};
    } else {
      a.taps[x] = interpolation_taps(o, xo, d);
    }
  }
  return a;
}

}  // namespace kiln::ops
