// CPU kernels for RoiAlign (the bilinear sampling of onnxruntime's reference, which the ONNX
// tests follow).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "backends/cpu/kernel.h"
#include "core/dispatch.h"
#include "core/error.h"

namespace kiln::cpu {
namespace {

// Bilinear weights and flat indices of one sample point in an H x W plane; all weights 0 when
// the point lies more than one pixel outside.
struct Sample {
  int64_t idx[4] = {0, 0, 0, 0};
  double w[4] = {0, 0, 0, 0};
};

Sample sample_at(double y, double x, int64_t h, int64_t w) {
  Sample s;
  if (y < -1.0 || y > static_cast<double>(h) || x < -1.0 || x > static_cast<double>(w)) return s;
  y = std::max(y, 0.0);
  x = std::max(x, 0.0);
  int64_t y0 = static_cast<int64_t>(y), x0 = static_cast<int64_t>(x), y1, x1;
  if (y0 >= h - 1) y1 = y0 = h - 1, y = static_cast<double>(y0);
  else y1 = y0 + 1;
  if (x0 >= w - 1) x1 = x0 = w - 1, x = static_cast<double>(x0);
  else x1 = x0 + 1;
  const double ly = y - y0, lx = x - x0, hy = 1 - ly, hx = 1 - lx;
  s.idx[0] = y0 * w + x0, s.idx[1] = y0 * w + x1, s.idx[2] = y1 * w + x0, s.idx[3] = y1 * w + x1;
  s.w[0] = hy * hx, s.w[1] = hy * lx, s.w[2] = ly * hx, s.w[3] = ly * lx;
  return s;
}

template <class T>
Status roi_align(KernelContext& ctx, Tensor& y) {
  const ir::Node& node = ctx.node();
  const Tensor& x = ctx.input(0);
  const Tensor& rois = ctx.input(1);
  const Tensor& batch = ctx.input(2);
  const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3);
  const int64_t num = rois.dim(0), oh = y.dim(2), ow = y.dim(3);
  KILN_ENSURE(rois.dim(1) == 4 && batch.numel() == num, "RoiAlign rois {} and batch_indices {} disagree",
              shape_to_string(rois.shape()), shape_to_string(batch.shape()));
  const bool half_pixel = node.attr_s("coordinate_transformation_mode", "half_pixel") == "half_pixel";
  const bool max_mode = node.attr_s("mode", "avg") == "max";
  const double scale = node.attr_f("spatial_scale", 1.0f);
  const int64_t ratio = node.attr_i("sampling_ratio", 0);
  const double offset = half_pixel ? 0.5 : 0.0;
  const T* xp = x.data_as<T>();
  T* yp = y.data_as<T>();
  auto ld = [](T v) { return static_cast<double>(static_cast<compute_t<T>>(v)); };
  for (int64_t r = 0; r < num; ++r) {
    const int64_t b = batch.data_as<int64_t>()[r];
    KILN_ENSURE(b >= 0 && b < n, "RoiAlign batch index {} out of range [0, {})", b, n);
    const T* roi = rois.data_as<T>() + r * 4;
    const double x0 = ld(roi[0]) * scale - offset, y0 = ld(roi[1]) * scale - offset;
    double rw = ld(roi[2]) * scale - offset - x0, rh = ld(roi[3]) * scale - offset - y0;
    if (!half_pixel) rw = std::max(rw, 1.0), rh = std::max(rh, 1.0);  // legacy: at least one pixel
    const double bh = rh / oh, bw = rw / ow;
    const int64_t gh = ratio > 0 ? ratio : static_cast<int64_t>(std::ceil(rh / oh));
    const int64_t gw = ratio > 0 ? ratio : static_cast<int64_t>(std::ceil(rw / ow));
    const double count = static_cast<double>(std::max<int64_t>(gh * gw, 1));
    // Sample points are the same for every channel.
    std::vector<Sample> samples;
    for (int64_t ph = 0; ph < oh; ++ph)
      for (int64_t pw = 0; pw < ow; ++pw)
        for (int64_t iy = 0; iy < gh; ++iy)
          for (int64_t ix = 0; ix < gw; ++ix)
            samples.push_back(sample_at(y0 + ph * bh + (iy + 0.5) * bh / gh, x0 + pw * bw + (ix + 0.5) * bw / gw, h, w));
    const int64_t per_bin = gh * gw;
    for (int64_t ch = 0; ch < c; ++ch) {
      const T* plane = xp + (b * c + ch) * h * w;
      T* out = yp + (r * c + ch) * oh * ow;
      for (int64_t bin = 0; bin < oh * ow; ++bin) {
        double acc = 0;
        for (int64_t k = 0; k < per_bin; ++k) {
          const Sample& s = samples[bin * per_bin + k];
          if (max_mode) {
            double v = s.w[0] * ld(plane[s.idx[0]]);
            for (int q = 1; q < 4; ++q) v = std::max(v, s.w[q] * ld(plane[s.idx[q]]));
            acc = k == 0 ? v : std::max(acc, v);
          } else {
            for (int q = 0; q < 4; ++q) acc += s.w[q] * ld(plane[s.idx[q]]);
          }
        }
        out[bin] = convert<T>(max_mode ? acc : acc / count);
      }
    }
  }
  return Status::OK();
}

Status roi_align_kernel(KernelContext& ctx) {
  Tensor& y = ctx.alloc_output(0);
  Status st = Status::OK();
  dispatch<IeeeFloatTypes>(y.dtype(), [&](auto tag) { st = roi_align<typename decltype(tag)::type>(ctx, y); });
  return st;
}

// MaxUnpool's shape without output_shape: (in - 1) * stride + kernel - pads, per spatial dim.
std::vector<int64_t> default_unpool_shape(const ir::Node& node, const std::vector<int64_t>& x) {
  const std::vector<int64_t> kernel = node.attr_ints("kernel_shape");
  const size_t sp = kernel.size();
  const std::vector<int64_t> strides = node.attr_ints("strides", std::vector<int64_t>(sp, 1));
  const std::vector<int64_t> pads = node.attr_ints("pads", std::vector<int64_t>(2 * sp, 0));
  std::vector<int64_t> s = x;
  for (size_t i = 0; i < sp; ++i) s[i + 2] = (x[i + 2] - 1) * strides[i] + kernel[i] - pads[i] - pads[i + sp];
  return s;
}

// Scatters X into a zero output at the flat indices MaxPool reported. The indices address the
// default unpooled shape; with an explicit output_shape each keeps its coordinates there.
Status max_unpool_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& idx = ctx.input(1);
  const std::vector<int64_t> from = default_unpool_shape(ctx.node(), x.shape());
  KILN_ENSURE(idx.numel() == x.numel(), "MaxUnpool indices {} do not match X {}", shape_to_string(idx.shape()),
              shape_to_string(x.shape()));
  Tensor& y = ctx.alloc_output(0);
  KILN_ENSURE(y.rank() == x.rank(), "MaxUnpool output_shape {} must have X's rank {}", shape_to_string(y.shape()),
              x.rank());
  const size_t es = dtype_size(x.dtype());
  std::memset(y.data(), 0, y.nbytes());
  const auto* src = static_cast<const char*>(x.data());
  auto* dst = static_cast<char*>(y.data());
  for (int64_t i = 0; i < x.numel(); ++i) {
    int64_t flat = idx.data_as<int64_t>()[i], j = 0, stride = 1;
    KILN_ENSURE(flat >= 0 && flat < Tensor::numel_of(from), "MaxUnpool index {} out of range", flat);
    for (int d = y.rank() - 1; d >= 0; --d) {
      const int64_t coord = flat % from[d];
      flat /= from[d];
      KILN_ENSURE(coord < y.dim(d), "MaxUnpool index falls outside output shape {}", shape_to_string(y.shape()));
      j += coord * stride;
      stride *= y.dim(d);
    }
    KILN_ENSURE(j >= 0 && j < y.numel(), "MaxUnpool index {} out of range [0, {})", j, y.numel());
    std::memcpy(dst + j * es, src + i * es, es);
  }
  return Status::OK();
}

}  // namespace

void register_extra_vision_pool_kernels(KernelRegistry& r) {
  r.add("RoiAlign", roi_align_kernel);
  r.add("MaxUnpool", max_unpool_kernel);
}

}  // namespace kiln::cpu
