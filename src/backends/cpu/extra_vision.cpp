// CPU kernels for LRN, EyeLike, NonMaxSuppression and Compress.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "backends/cpu/kernel.h"
#include "core/dispatch.h"
#include "core/error.h"
#include "ops/shape_util.h"

namespace kiln::cpu {

void register_extra_vision_pool_kernels(KernelRegistry& r);

namespace {

// y = x / (bias + alpha / size * sum of x^2 over the channel window)^beta, with the window
// [c - floor((size-1)/2), c + ceil((size-1)/2)] clipped to the channels.
template <class T>
void lrn(const Tensor& x, const ir::Node& node, Tensor& y) {
  const double alpha = node.attr_f("alpha", 1e-4f), beta = node.attr_f("beta", 0.75f), bias = node.attr_f("bias", 1.0f);
  const int64_t size = node.attr_i("size", 1);
  const int64_t n = x.dim(0), c = x.dim(1), inner = x.numel() / std::max<int64_t>(1, n * c);
  const int64_t lo = (size - 1) / 2, hi = size - 1 - lo;
  const T* xp = x.data_as<T>();
  T* yp = y.data_as<T>();
  auto at = [&](int64_t b, int64_t ch, int64_t i) { return (b * c + ch) * inner + i; };
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t ch = 0; ch < c; ++ch) {
      const int64_t c0 = std::max<int64_t>(0, ch - lo), c1 = std::min<int64_t>(c - 1, ch + hi);
      for (int64_t i = 0; i < inner; ++i) {
        double sq = 0;
        for (int64_t k = c0; k <= c1; ++k) {
          const double v = static_cast<compute_t<T>>(xp[at(b, k, i)]);
          sq += v * v;
        }
        const double v = static_cast<compute_t<T>>(xp[at(b, ch, i)]);
        yp[at(b, ch, i)] = convert<T>(v / std::pow(bias + alpha / static_cast<double>(size) * sq, beta));
      }
    }
  }
}

Status lrn_kernel(KernelContext& ctx) {
  Tensor& y = ctx.alloc_output(0);
  dispatch<IeeeFloatTypes>(y.dtype(), [&](auto tag) { lrn<typename decltype(tag)::type>(ctx.input(0), ctx.node(), y); });
  return Status::OK();
}

Status eye_like_kernel(KernelContext& ctx) {
  Tensor& y = ctx.alloc_output(0);
  const int64_t rows = y.dim(0), cols = y.dim(1), k = ctx.node().attr_i("k", 0);
  const bool ok = dispatch<AllTypes>(y.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = y.data_as<T>();
    std::fill(p, p + y.numel(), convert<T>(0.0f));
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t c = r + k;
      if (c >= 0 && c < cols) p[r * cols + c] = convert<T>(1.0f);
    }
  });
  if (!ok) return unsupported("EyeLike does not support output dtype {}", dtype_name(y.dtype()));
  return Status::OK();
}

// A box as (y1, x1, y2, x2) with y1 <= y2 and x1 <= x2.
struct Box {
  float y1, x1, y2, x2;
  float area() const { return (y2 - y1) * (x2 - x1); }
};

Box read_box(const float* p, bool center_point) {
  if (center_point) {  // [x_center, y_center, width, height]
    return {p[1] - p[3] / 2, p[0] - p[2] / 2, p[1] + p[3] / 2, p[0] + p[2] / 2};
  }
  // Corners may come as either diagonal pair.
  return {std::min(p[0], p[2]), std::min(p[1], p[3]), std::max(p[0], p[2]), std::max(p[1], p[3])};
}

float iou(const Box& a, const Box& b) {
  const float ia = a.area(), ib = b.area();
  if (ia <= 0 || ib <= 0) return 0;
  const float h = std::min(a.y2, b.y2) - std::max(a.y1, b.y1);
  const float w = std::min(a.x2, b.x2) - std::max(a.x1, b.x1);
  if (h <= 0 || w <= 0) return 0;
  const float inter = h * w;
  return inter / (ia + ib - inter);
}

float optional_scalar(const KernelContext& ctx, int i, float dflt) {
  if (!ctx.has_input(i) || ctx.input(i).numel() == 0) return dflt;
  return *ctx.input(i).data_as<float>();
}

Status nms_kernel(KernelContext& ctx) {
  const Tensor& boxes = ctx.input(0);
  const Tensor& scores = ctx.input(1);
  const int64_t batches = boxes.dim(0), n = boxes.dim(1), classes = scores.dim(1);
  KILN_ENSURE(scores.dim(0) == batches && scores.dim(2) == n, "boxes {} and scores {} disagree",
              shape_to_string(boxes.shape()), shape_to_string(scores.shape()));
  const int64_t max_out = ctx.has_input(2) && ctx.input(2).numel() > 0 ? *ctx.input(2).data_as<int64_t>() : 0;
  const float iou_threshold = optional_scalar(ctx, 3, 0.0f);
  const bool has_score_threshold = ctx.has_input(4) && ctx.input(4).numel() > 0;
  const float score_threshold = optional_scalar(ctx, 4, 0.0f);
  const bool center = ctx.node().attr_i("center_point_box", 0) != 0;

  std::vector<int64_t> selected;  // triples (batch, class, box)
  std::vector<int64_t> order;
  std::vector<Box> kept;
  for (int64_t b = 0; b < batches && max_out > 0; ++b) {
    std::vector<Box> bx(n);
    for (int64_t i = 0; i < n; ++i) bx[i] = read_box(boxes.data_as<float>() + (b * n + i) * 4, center);
    for (int64_t c = 0; c < classes; ++c) {
      const float* s = scores.data_as<float>() + (b * classes + c) * n;
      order.clear();
      for (int64_t i = 0; i < n; ++i)
        if (!has_score_threshold || s[i] > score_threshold) order.push_back(i);
      // Highest score first; ties keep the lower box index first.
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b2) { return s[a] > s[b2]; });
      kept.clear();
      for (int64_t i : order) {
        if (static_cast<int64_t>(kept.size()) >= max_out) break;
        bool keep = true;
        for (const Box& k : kept) keep = keep && iou(k, bx[i]) <= iou_threshold;
        if (!keep) continue;
        kept.push_back(bx[i]);
        selected.insert(selected.end(), {b, c, i});
      }
    }
  }
  Tensor& out = ctx.alloc_output(0, DType::kInt64, {static_cast<int64_t>(selected.size() / 3), 3});
  std::copy(selected.begin(), selected.end(), out.data_as<int64_t>());
  return Status::OK();
}

// Copies the slices of x along `axis` (x viewed as [outer, len, inner]) whose condition is
// true; entries past the condition's end are dropped.
Status compress_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& cond = ctx.input(1);
  const bool flat = !ctx.node().attrs.count("axis");
  int64_t axis = 0;
  if (!flat) KILN_RETURN_IF_ERROR(ops::normalize_axis(ctx.node().attr_i("axis", 0), x.rank(), &axis));
  const int64_t len = flat ? x.numel() : x.dim(static_cast<int>(axis));
  KILN_ENSURE(cond.numel() <= len, "Compress condition has {} entries for {} slices", cond.numel(), len);
  int64_t outer = 1, inner = 1;
  if (!flat) {
    for (int d = 0; d < axis; ++d) outer *= x.dim(d);
    for (int d = static_cast<int>(axis) + 1; d < x.rank(); ++d) inner *= x.dim(d);
  }
  std::vector<int64_t> picked;
  for (int64_t i = 0; i < cond.numel(); ++i)
    if (cond.data_as<bool>()[i]) picked.push_back(i);
  std::vector<int64_t> shape = flat ? std::vector<int64_t>{} : x.shape();
  if (flat) shape.push_back(static_cast<int64_t>(picked.size()));
  else shape[axis] = static_cast<int64_t>(picked.size());
  Tensor& y = ctx.alloc_output(0, x.dtype(), shape);
  const size_t es = dtype_size(x.dtype());
  const auto* src = static_cast<const char*>(x.data());
  auto* dst = static_cast<char*>(y.data());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i : picked) {
      std::memcpy(dst, src + (o * len + i) * inner * es, inner * es);
      dst += inner * es;
    }
  }
  return Status::OK();
}

}  // namespace

void register_extra_vision_kernels(KernelRegistry& r) {
  r.add("LRN", lrn_kernel);
  r.add("EyeLike", eye_like_kernel);
  r.add("NonMaxSuppression", nms_kernel);
  r.add("Compress", compress_kernel);
  register_extra_vision_pool_kernels(r);
}

}  // namespace kiln::cpu
