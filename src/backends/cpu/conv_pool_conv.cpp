// CPU Conv and ConvTranspose: im2col / col2im plus one GEMM per (batch item, group).
// fp16/bf16 are converted to float, computed, and converted back.
#include <algorithm>

#include "backends/cpu/conv_pool.h"
#include "core/dispatch.h"
#include "core/error.h"
#include "ops/conv_pool.h"

namespace kiln::cpu {

namespace {

using ComputeTypes = TypeList<float, double>;

bool is_small_float(DType t) {
  return t == DType::kFloat16 || t == DType::kBFloat16;
}

// The tensor in the dtype the kernel computes in: float for fp16/bf16, unchanged otherwise.
Tensor to_compute(const Tensor& t) {
  return is_small_float(t.dtype()) ? t.to(DType::kFloat32) : t;
}

std::vector<int64_t> spatial(const Tensor& t) {
  return {t.shape().begin() + 2, t.shape().end()};
}

}  // namespace

Status resolve_conv_problem(const KernelContext& ctx, bool transpose, int w_slot, int b_slot,
                            ConvProblem* p) {
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(w_slot);
  KILN_ENSURE(x.rank() >= 3 && w.rank() == x.rank(),
              "X {} and W {} must be [N, C, spatial...] of the same rank", shape_to_string(x.shape()),
              shape_to_string(w.shape()));
  ops::WindowAttrs a;
  KILN_RETURN_IF_ERROR(ops::read_window_attrs(ctx.node(), x.rank() - 2, &a));
  const std::vector<int64_t> kernel = a.kernel.empty() ? spatial(w) : a.kernel;
  KILN_ENSURE(kernel == spatial(w), "kernel_shape disagrees with W {}", shape_to_string(w.shape()));
  p->group = ctx.node().attr_i("group", 1);
  p->batch = x.dim(0);
  p->in_channels = x.dim(1);
  KILN_ENSURE(p->group >= 1 && p->in_channels % p->group == 0, "X has {} channels, not divisible by group {}",
              p->in_channels, p->group);
  if (transpose) {
    KILN_ENSURE(w.dim(0) == p->in_channels, "W {} must have {} input channels like X",
                shape_to_string(w.shape()), p->in_channels);
    p->out_channels = w.dim(1) * p->group;
    KILN_RETURN_IF_ERROR(ops::resolve_transpose_window(a, kernel, spatial(x), &p->win));
  } else {
    KILN_ENSURE(w.dim(1) * p->group == p->in_channels && w.dim(0) % p->group == 0,
                "W {} does not fit X with {} channels and group {}", shape_to_string(w.shape()),
                p->in_channels, p->group);
    p->out_channels = w.dim(0);
    KILN_RETURN_IF_ERROR(ops::resolve_window(a, kernel, spatial(x), &p->win));
  }
  if (b_slot >= 0 && ctx.has_input(b_slot)) {
    const Tensor& b = ctx.input(b_slot);
    KILN_ENSURE(b.rank() == 1 && b.dim(0) == p->out_channels, "bias B {} must be [{}]",
                shape_to_string(b.shape()), p->out_channels);
  }
  return Status::OK();
}

namespace {

// Sets each of the `channels` rows (of length `len`) of y to its bias.
template <class T>
void fill_bias(const T* bias, int64_t channels, int64_t len, T* y) {
  for (int64_t m = 0; m < channels; ++m) std::fill(y + m * len, y + (m + 1) * len, bias[m]);
}

template <class T>
void add_bias(const T* bias, int64_t channels, int64_t len, T* y) {
  for (int64_t m = 0; m < channels; ++m) {
    for (int64_t i = 0; i < len; ++i) y[m * len + i] += bias[m];
  }
}

// A 1x1, stride-1, unpadded window reads its input as it is: no im2col needed.
bool is_pointwise(const ops::Window& w) {
  for (int d = 0; d < w.nsp; ++d) {
    if (w.kernel[d] != 1 || w.strides[d] != 1 || w.pad_begin(d) != 0 || w.pad_end(d) != 0) return false;
  }
  return true;
}

}  // namespace

template <class T>
void conv_forward(const ConvProblem& p, const T* x, const T* w, const T* bias, T* y) {
  const ops::Window& win = p.win;
  const ColGeometry geo{win.nsp,
                        win.in,
                        win.out,
                        win.kernel,
                        win.strides,
                        win.dilations,
                        {win.pads.begin(), win.pads.begin() + win.nsp}};
  const int64_t cg = p.in_channels / p.group, mg = p.out_channels / p.group;
  const int64_t rows = cg * geo.kernel_size();  // GEMM reduction length
  const int64_t in_size = geo.image_size(), out_size = geo.grid_size();
  const bool pointwise = is_pointwise(win);
  std::vector<T> col(pointwise ? 0 : static_cast<size_t>(rows * out_size));
  for (int64_t n = 0; n < p.batch; ++n) {
    for (int64_t g = 0; g < p.group; ++g) {
      const T* xg = x + (n * p.in_channels + g * cg) * in_size;
      T* yg = y + (n * p.out_channels + g * mg) * out_size;
      if (bias) fill_bias(bias + g * mg, mg, out_size, yg);
      if (rows == 0 || out_size == 0 || mg == 0) continue;
      if (cg == 1 && mg == 1 && !pointwise) {
        depthwise_accumulate(xg, geo, w + g * rows, yg);
        continue;
      }
      if (!pointwise) im2col(xg, cg, geo, col.data());
      gemm<T>(false, false, mg, out_size, rows, T(1), w + g * mg * rows, rows, pointwise ? xg : col.data(),
              out_size, bias ? T(1) : T(0), yg, out_size);
    }
  }
}

template void conv_forward<float>(const ConvProblem&, const float*, const float*, const float*, float*);
template void conv_forward<double>(const ConvProblem&, const double*, const double*, const double*, double*);

namespace {

template <class T>
void conv_transpose_forward(const ConvProblem& p, const T* x, const T* w, const T* bias, T* y) {
  const ops::Window& win = p.win;
  // The output is the image the (transposed) windows scatter into; the input is their grid.
  const ColGeometry geo{win.nsp,
                        win.out,
                        win.in,
                        win.kernel,
                        win.strides,
                        win.dilations,
                        {win.pads.begin(), win.pads.begin() + win.nsp}};
  const int64_t cg = p.in_channels / p.group, mg = p.out_channels / p.group;
  const int64_t rows = mg * geo.kernel_size();
  const int64_t in_size = geo.grid_size(), out_size = geo.image_size();
  std::vector<T> col(static_cast<size_t>(rows * in_size));
  for (int64_t n = 0; n < p.batch; ++n) {
    for (int64_t g = 0; g < p.group; ++g) {
      T* yg = y + (n * p.out_channels + g * mg) * out_size;
      if (rows == 0 || in_size == 0) continue;
      // col[Mg*K, in] = W_g^T [Mg*K, Cg] x X_g [Cg, in]; W_g is stored [Cg, Mg*K].
      if (cg == 0) {
        std::fill(col.begin(), col.end(), T(0));
      } else {
        gemm<T>(true, false, rows, in_size, cg, T(1), w + g * cg * rows, rows,
                x + (n * p.in_channels + g * cg) * in_size, in_size, T(0), col.data(), in_size);
      }
      col2im(col.data(), mg, geo, yg);
    }
    if (bias) add_bias(bias, p.out_channels, out_size, y + n * p.out_channels * out_size);
  }
}

// Shared driver: resolves the problem, converts to the compute type, runs `forward`, and
// converts the result back to X's dtype.
template <bool kTranspose>
Status run_conv(KernelContext& ctx) {
  ConvProblem p;
  KILN_RETURN_IF_ERROR(resolve_conv_problem(ctx, kTranspose, 1, 2, &p));
  const DType dtype = ctx.input(0).dtype();
  const Tensor x = to_compute(ctx.input(0)), w = to_compute(ctx.input(1));
  const Tensor b = ctx.has_input(2) ? to_compute(ctx.input(2)) : Tensor();
  std::vector<int64_t> y_shape{p.batch, p.out_channels};
  y_shape.insert(y_shape.end(), p.win.out.begin(), p.win.out.end());
  Tensor y(x.dtype(), y_shape);
  const bool ok = dispatch<ComputeTypes>(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* bias = b.defined() ? b.data_as<T>() : nullptr;
    if constexpr (kTranspose) {
      conv_transpose_forward<T>(p, x.data_as<T>(), w.data_as<T>(), bias, y.data_as<T>());
    } else {
      conv_forward<T>(p, x.data_as<T>(), w.data_as<T>(), bias, y.data_as<T>());
    }
  });
  if (!ok) return unsupported("dtype {} is not supported", dtype_name(dtype));
  ctx.set_output(0, y.dtype() == dtype ? y : y.to(dtype));
  return Status::OK();
}

}  // namespace

void register_conv_kernels(KernelRegistry& r) {
  r.add("Conv", run_conv<false>);
  r.add("ConvTranspose", run_conv<true>);
}

}  // namespace kiln::cpu
