// CPU kernel for Resize (Upsample is rewritten into Resize by canonicalize). Follows the ONNX
// reference implementation: every output coordinate maps to an input coordinate per axis
// (ops/resize_taps.h, shared with the GPU layer), then takes a weighted sum of neighbouring
// input elements ("taps") in each axis. Taps are computed once per axis and output
// coordinate, so the N-D loop is plain multiply-adds.
#include <cmath>

#include "backends/cpu/kernel.h"
#include "backends/cpu/reduce.h"
#include "core/dispatch.h"
#include "core/error.h"
#include "ops/resize.h"
#include "ops/resize_taps.h"

namespace kiln::cpu {
namespace {

using Options = ops::ResizeOptions;
using Tap = ops::ResizeTap;
using AxisTaps = ops::ResizeAxisTaps;

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
  const Options o = ops::resize_options(node);
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
  for (const auto& d : dims) axes.push_back(ops::resize_axis_taps(o, d));
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
