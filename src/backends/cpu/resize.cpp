// CPU kernel for Resize (Upsample is rewritten into Resize by canonicalize). Follows the ONNX
// reference implementation: every output coordinate maps to an input coordinate per axis,
// then takes a weighted sum of neighbouring input elements ("taps") in each axis. Taps are
// computed once per axis and output coordinate, so the N-D loop is plain multiply-adds.
#include <cmath>

#include "backends/cpu/kernel.h"
#include "backends/cpu/reduce.h"
#include "core/dispatch.h"
#include "core/error.h"
#include "ops/resize.h"

namespace kiln::cpu {
namespace {

struct Options {
  std::string mode, ctm, nearest_mode;
  double cubic_a = -0.75;
  bool exclude_outside = false;
  bool antialias = false;
};

struct Tap {
  int64_t index;
  double weight;
};

// Taps of every output coordinate along one axis; `outside` marks coordinates that fall
// outside the crop of tf_crop_and_resize and take the extrapolation value.
struct AxisTaps {
  std::vector<std::vector<Tap>> taps;
  std::vector<bool> outside;
};

// The input coordinate that output coordinate x maps to.
double original_coordinate(const Options& o, int64_t xi, const ops::ResizeDim& d) {
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

int64_t nearest_index(const Options& o, double x, double scale) {
  const double fl = std::floor(x);
  const bool half = x - fl == 0.5;
  if (o.nearest_mode == "round_prefer_floor") return static_cast<int64_t>(half ? fl : std::round(x));
  if (o.nearest_mode == "round_prefer_ceil") return static_cast<int64_t>(half ? fl + 1 : std::round(x));
  if (o.nearest_mode == "floor") return static_cast<int64_t>(fl);
  if (o.nearest_mode == "ceil") return static_cast<int64_t>(std::ceil(x));
  return static_cast<int64_t>(scale < 1 ? std::ceil(x) : fl);  // "simple" (Resize-10, Upsample)
}

double filter(const Options& o, double x) {
  x = std::fabs(x);
  if (o.mode == "linear") return std::max(0.0, 1 - x);
  const double a = o.cubic_a;  // Keys cubic convolution
  if (x <= 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  return 0.0;
}

// Linear/cubic taps around x. With antialias, a downscaling axis stretches the filter by
// 1/scale so every input element contributes; weights are normalized to sum to 1.
std::vector<Tap> interpolation_taps(const Options& o, double x, const ops::ResizeDim& d) {
  const double s = o.antialias ? std::min(d.scale, 1.0) : 1.0;
  const double support = o.mode == "linear" ? 1.0 : 2.0;
  const auto start = static_cast<int64_t>(std::floor(-support / s) + 1);
  // The left neighbour is strictly below x (ratio in (0, 1]), as in the reference.
  const double fl = std::floor(x);
  const int64_t left = static_cast<int64_t>(fl) - (x == fl ? 1 : 0);
  const double ratio = x - static_cast<double>(left);
  std::vector<Tap> taps;
  double sum = 0;
  for (int64_t i = start; i < 1 - start + 1; ++i) {
    const int64_t pos = left + i;
    double w = filter(o, s * (static_cast<double>(i) - ratio));
    if (o.exclude_outside && (pos < 0 || pos >= d.in)) w = 0;
    sum += w;
    taps.push_back({std::clamp<int64_t>(pos, 0, d.in - 1), w});
  }
  std::vector<Tap> kept;
  for (Tap& t : taps) {
    if (t.weight != 0) kept.push_back({t.index, t.weight / sum});
  }
  return kept;
}

AxisTaps axis_taps(const Options& o, const ops::ResizeDim& d) {
  AxisTaps a;
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

// Visits every output element in row-major order with its per-axis output coordinates, or
// with `outside` set when any axis falls outside the crop.
template <class F>
void for_each_output(const std::vector<AxisTaps>& axes, const std::vector<int64_t>& out_shape, F&& f) {
  const int rank = static_cast<int>(out_shape.size());
  const int64_t n = Tensor::numel_of(out_shape);
  std::vector<int64_t> idx(rank, 0);
  for (int64_t o = 0; o < n; ++o) {
    bool outside = false;
    for (int d = 0; d < rank; ++d) outside |= axes[d].outside[idx[d]];
    f(o, idx, outside);
    for (int d = rank - 1; d >= 0; --d) {
      if (++idx[d] < out_shape[d]) break;
      idx[d] = 0;
    }
  }
}

std::vector<int64_t> strides_of(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d) s[d] = s[d + 1] * shape[d + 1];
  return s;
}

// Nearest: a copy of one input element per output element, so any dtype works unchanged.
template <class T>
void resize_nearest(const Tensor& x, const std::vector<AxisTaps>& axes, double extrapolation, Tensor& y) {
  const auto strides = strides_of(x.shape());
  const T* in = x.data_as<T>();
  T* out = y.data_as<T>();
  const T fill = convert<T>(extrapolation);
  for_each_output(axes, y.shape(), [&](int64_t o, const std::vector<int64_t>& idx, bool outside) {
    if (outside) {
      out[o] = fill;
      return;
    }
    int64_t off = 0;
    for (size_t d = 0; d < idx.size(); ++d) off += axes[d].taps[idx[d]][0].index * strides[d];
    out[o] = in[off];
  });
}

template <class T>
struct Interpolator {
  const T* in;
  const std::vector<AxisTaps>& axes;
  std::vector<int64_t> strides;

  // Weighted sum over the taps of axes d.. for output coordinates idx, from input offset off.
  double sum(size_t d, int64_t off, const std::vector<int64_t>& idx) const {
    if (d == idx.size()) return static_cast<double>(static_cast<compute_t<T>>(in[off]));
    double s = 0;
    for (const Tap& t : axes[d].taps[idx[d]]) s += t.weight * sum(d + 1, off + t.index * strides[d], idx);
    return s;
  }
};

template <class T>
void resize_interpolate(const Tensor& x, const std::vector<AxisTaps>& axes, double extrapolation, Tensor& y) {
  const Interpolator<T> interp{x.data_as<T>(), axes, strides_of(x.shape())};
  T* out = y.data_as<T>();
  for_each_output(axes, y.shape(), [&](int64_t o, const std::vector<int64_t>& idx, bool outside) {
    out[o] = saturate_cast<T>(outside ? extrapolation : interp.sum(0, 0, idx));
  });
}

// Input i when present and not an empty tensor (opset 11 passes empty roi/scales).
const Tensor* optional_input(const KernelContext& ctx, int i) {
  return ctx.has_input(i) && ctx.input(i).numel() > 0 ? &ctx.input(i) : nullptr;
}

Status resize(KernelContext& ctx) {
  const ir::Node& node = ctx.node();
  const Tensor& x = ctx.input(0);
  Options o;
  o.mode = node.attr_s("mode", "nearest");
  o.ctm = node.attr_s("coordinate_transformation_mode", "half_pixel");
  o.nearest_mode = node.attr_s("nearest_mode", "round_prefer_floor");
  o.cubic_a = node.attr_f("cubic_coeff_a", -0.75f);
  o.exclude_outside = node.attr_i("exclude_outside", 0) != 0;
  o.antialias = node.attr_i("antialias", 0) != 0;
  const double extrapolation = node.attr_f("extrapolation_value", 0.0f);

  const Tensor* roi = o.ctm == "tf_crop_and_resize" ? optional_input(ctx, 1) : nullptr;
  std::vector<ops::ResizeDim> dims;
  KILN_RETURN_IF_ERROR(ops::plan_resize(node, x.shape(), roi, optional_input(ctx, 2), optional_input(ctx, 3), &dims));
  std::vector<int64_t> out_shape;
  for (const auto& d : dims) out_shape.push_back(d.out);
  Tensor& y = ctx.alloc_output(0, x.dtype(), out_shape);
  if (y.numel() == 0) return Status::OK();
  KILN_ENSURE(x.numel() > 0, "cannot resize an empty input of shape {} to {}", shape_to_string(x.shape()),
              shape_to_string(out_shape));

  std::vector<AxisTaps> axes;
  for (const auto& d : dims) axes.push_back(axis_taps(o, d));
  bool ok;
  if (o.mode == "nearest") {
    ok = dispatch<AllTypes>(x.dtype(), [&](auto tag) {
      resize_nearest<typename decltype(tag)::type>(x, axes, extrapolation, y);
    });
  } else {
    ok = dispatch<NumericTypes>(x.dtype(), [&](auto tag) {
      resize_interpolate<typename decltype(tag)::type>(x, axes, extrapolation, y);
    });
  }
  if (!ok) return unsupported("Resize mode {} does not support dtype {}", o.mode, dtype_name(x.dtype()));
  return Status::OK();
}

}  // namespace

void register_resize_kernels(KernelRegistry& r) { r.add("Resize", resize); }

}  // namespace kiln::cpu
