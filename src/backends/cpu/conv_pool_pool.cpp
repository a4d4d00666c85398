// CPU pooling kernels (MaxPool, AveragePool, LpPool and their Global forms). One engine walks
// every window of every (N, C) plane; a small reducer struct per op folds the window's values.
#include <cmath>
#include <limits>

#include "backends/cpu/conv_pool.h"
#include "core/dispatch.h"
#include "core/error.h"
#include "ops/conv_pool.h"

namespace kiln::cpu {

namespace {

using MaxPoolTypes = TypeList<float, double, float16, bfloat16, int8_t, uint8_t>;
using PoolFloatTypes = TypeList<float, double, float16, bfloat16>;

// For one spatial dim and each output position: the input coordinates its window reads, and how
// many taps fall inside the explicitly padded input (the count_include_pad divisor; taps past
// the end pad that ceil_mode adds are not counted).
struct DimTaps {
  std::vector<std::vector<int64_t>> coords;
  std::vector<int64_t> padded;
};

std::vector<DimTaps> build_taps(const ops::Window& w) {
  std::vector<DimTaps> taps(w.nsp);
  for (int d = 0; d < w.nsp; ++d) {
    taps[d].coords.resize(w.out[d]);
    taps[d].padded.assign(w.out[d], 0);
    for (int64_t o = 0; o < w.out[d]; ++o) {
      for (int64_t k = 0; k < w.kernel[d]; ++k) {
        const int64_t c = o * w.strides[d] - w.pad_begin(d) + k * w.dilations[d];
        if (c >= 0 && c < w.in[d]) taps[d].coords[o].push_back(c);
        if (c >= -w.pad_begin(d) && c < w.in[d] + w.pad_end(d)) ++taps[d].padded[o];
      }
    }
  }
  return taps;
}

struct MaxReducer {
  double best = 0;
  int64_t best_off = -1;
  explicit MaxReducer(const ir::Node&) {}
  void reset() { best_off = -1; }
  void add(double v, int64_t off) {
    if (best_off < 0 || v > best) {
      best = v;
      best_off = off;
    }
  }
  double result(int64_t, int64_t) const { return best_off < 0 ? 0.0 : best; }
};

struct AverageReducer {
  double sum = 0;
  bool include_pad;
  explicit AverageReducer(const ir::Node& n) : include_pad(n.attr_i("count_include_pad", 0) != 0) {}
  void reset() { sum = 0; }
  void add(double v, int64_t) { sum += v; }
  double result(int64_t valid, int64_t padded) const {
    const int64_t count = include_pad ? padded : valid;
    return count == 0 ? 0.0 : sum / static_cast<double>(count);
  }
  int64_t best_off = -1;  // no argmax
};

struct LpReducer {
  double sum = 0;
  double p;
  explicit LpReducer(const ir::Node& n) : p(static_cast<double>(n.attr_i("p", 2))) {}
  void reset() { sum = 0; }
  void add(double v, int64_t) { sum += p == 2 ? v * v : std::pow(std::fabs(v), p); }
  double result(int64_t, int64_t) const { return p == 2 ? std::sqrt(sum) : std::pow(sum, 1.0 / p); }
  int64_t best_off = -1;
};

// Feeds every tap of the window (the product of per-dim coordinate lists) to the reducer.
// Values are passed as double: exact for every pooled type (int8/uint8 and floats).
template <class T, class R>
void visit_taps(const T* plane, const std::vector<const std::vector<int64_t>*>& lists,
                const std::vector<int64_t>& strides, int d, int64_t off, R& r) {
  if (d == static_cast<int>(lists.size())) {
    r.add(static_cast<double>(static_cast<compute_t<T>>(plane[off])), off);
    return;
  }
  for (int64_t c : *lists[d]) visit_taps(plane, lists, strides, d + 1, off + c * strides[d], r);
}

// Row-major offset within a plane to the column-major one (MaxPool storage_order = 1).
int64_t to_column_major(int64_t off, const std::vector<int64_t>& dims) {
  int64_t result = 0, scale = 1;
  std::vector<int64_t> coord(dims.size());
  for (int d = static_cast<int>(dims.size()) - 1; d >= 0; --d) {
    coord[d] = off % dims[d];
    off /= dims[d];
  }
  for (size_t d = 0; d < dims.size(); ++d) {
    result += coord[d] * scale;
    scale *= dims[d];
  }
  return result;
}

// Pools `planes` planes of x into y; fills `indices` (flat input positions of the maxima) when
// given.
template <class T, class R>
void pool_planes(const T* x, int64_t planes, const ops::Window& w, R& r, T* y, int64_t* indices,
                 bool column_major) {
  const std::vector<DimTaps> taps = build_taps(w);
  const int nsp = w.nsp;
  std::vector<int64_t> in_strides(nsp, 1);
  for (int d = nsp - 2; d >= 0; --d) in_strides[d] = in_strides[d + 1] * w.in[d + 1];
  const int64_t in_size = nsp == 0 ? 1 : in_strides[0] * w.in[0];
  int64_t out_size = 1;
  for (int64_t o : w.out) out_size *= o;

  std::vector<const std::vector<int64_t>*> lists(nsp);
  std::vector<int64_t> o(nsp);
  for (int64_t p = 0; p < planes; ++p) {
    const T* plane = x + p * in_size;
    for (int64_t i = 0; i < out_size; ++i) {
      int64_t valid = 1, padded = 1;
      for (int64_t rem = i, d = nsp - 1; d >= 0; --d) {
        o[d] = rem % w.out[d];
        rem /= w.out[d];
        lists[d] = &taps[d].coords[o[d]];
        valid *= static_cast<int64_t>(lists[d]->size());
        padded *= taps[d].padded[o[d]];
      }
      r.reset();
      visit_taps(plane, lists, in_strides, 0, 0, r);
      y[p * out_size + i] = convert<T>(r.result(valid, padded));
      if (indices) {
        const int64_t off = std::max<int64_t>(r.best_off, 0);
        indices[p * out_size + i] = p * in_size + (column_major ? to_column_major(off, w.in) : off);
      }
    }
  }
}

std::vector<int64_t> spatial(const Tensor& t) {
  return {t.shape().begin() + 2, t.shape().end()};
}

// A global pool is a window pool whose one window covers the whole plane.
ops::Window global_window(const Tensor& x) {
  ops::Window w;
  w.nsp = x.rank() - 2;
  w.in = w.kernel = spatial(x);
  w.strides.assign(w.nsp, 1);
  w.dilations.assign(w.nsp, 1);
  w.pads.assign(2 * w.nsp, 0);
  w.out.assign(w.nsp, 1);
  return w;
}

template <class R, class Types, bool kGlobal>
Status run_pool(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  KILN_ENSURE(x.rank() >= 3, "X {} must be [N, C, spatial...]", shape_to_string(x.shape()));
  ops::Window w;
  if constexpr (kGlobal) {
    w = global_window(x);
  } else {
    ops::WindowAttrs a;
    KILN_RETURN_IF_ERROR(ops::read_window_attrs(ctx.node(), x.rank() - 2, &a));
    KILN_ENSURE(!a.kernel.empty(), "attribute kernel_shape is required");
    KILN_RETURN_IF_ERROR(ops::resolve_window(a, a.kernel, spatial(x), &w));
  }
  std::vector<int64_t> y_shape{x.dim(0), x.dim(1)};
  y_shape.insert(y_shape.end(), w.out.begin(), w.out.end());
  Tensor& y = ctx.alloc_output(0, x.dtype(), y_shape);
  int64_t* indices = nullptr;
  if (ctx.has_output(1)) indices = ctx.alloc_output(1, DType::kInt64, y_shape).data_as<int64_t>();
  const bool column_major = ctx.node().attr_i("storage_order", 0) == 1;
  R reducer(ctx.node());
  const bool ok = dispatch<Types>(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    pool_planes<T>(x.data_as<T>(), x.dim(0) * x.dim(1), w, reducer, y.data_as<T>(), indices, column_major);
  });
  if (!ok) return unsupported("dtype {} is not supported", dtype_name(x.dtype()));
  return Status::OK();
}

}  // namespace

void register_pool_kernels(KernelRegistry& r) {
  r.add("MaxPool", run_pool<MaxReducer, MaxPoolTypes, false>);
  r.add("AveragePool", run_pool<AverageReducer, PoolFloatTypes, false>);
  r.add("LpPool", run_pool<LpReducer, PoolFloatTypes, false>);
  r.add("GlobalMaxPool", run_pool<MaxReducer, PoolFloatTypes, true>);
  r.add("GlobalAveragePool", run_pool<AverageReducer, PoolFloatTypes, true>);
  r.add("GlobalLpPool", run_pool<LpReducer, PoolFloatTypes, true>);
}

}  // namespace kiln::cpu
