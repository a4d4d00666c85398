// CPU ConvInteger and QLinearConv. The zero points are subtracted up front and the products
// summed in double, which is exact for 8-bit operands (|sum| < 2^53), through Conv's GEMM path.
#include <algorithm>
#include <cmath>
#include <limits>

#include "backends/cpu/conv_pool.h"
#include "core/dispatch.h"
#include "core/error.h"

namespace kiln::cpu {

namespace {

using Int8Types = TypeList<int8_t, uint8_t>;

// Values of an optional scalar or per-channel quantization parameter as doubles (`dflt` when
// absent); one value, or one per channel.
Status param_values(const KernelContext& ctx, int slot, int64_t channels, double dflt,
                    std::vector<double>* out) {
  if (!ctx.has_input(slot)) {
    out->assign(1, dflt);
    return Status::OK();
  }
  const Tensor& t = ctx.input(slot);
  KILN_ENSURE(t.numel() == 1 || t.numel() == channels, "input {} has {} values, expected 1 or {}", slot,
              t.numel(), channels);
  const Tensor d = t.to(DType::kFloat64);
  out->assign(d.data_as<double>(), d.data_as<double>() + d.numel());
  return Status::OK();
}

// (t - zero_point[c]) as float64, where c is the index along dim 0 (W's output channel; a single
// zero point for X).
Tensor centered(const Tensor& t, const std::vector<double>& zero_points) {
  Tensor d = t.to(DType::kFloat64);
  double* v = d.data_as<double>();
  const int64_t per = d.dim(0) == 0 ? 0 : d.numel() / d.dim(0);
  for (int64_t i = 0; i < d.numel(); ++i)
    v[i] -= zero_points.size() == 1 ? zero_points[0] : zero_points[i / per];
  return d;
}

std::vector<int64_t> output_shape(const ConvProblem& p) {
  std::vector<int64_t> s{p.batch, p.out_channels};
  s.insert(s.end(), p.win.out.begin(), p.win.out.end());
  return s;
}

// The exact integer accumulators of conv(x - x_zp, w - w_zp) (+ bias), as doubles.
Status accumulate(const KernelContext& ctx, int w_slot, int x_zp_slot, int w_zp_slot, int b_slot,
                  ConvProblem* p, Tensor* acc) {
  KILN_RETURN_IF_ERROR(resolve_conv_problem(ctx, false, w_slot, b_slot, p));
  std::vector<double> x_zp, w_zp;
  KILN_RETURN_IF_ERROR(param_values(ctx, x_zp_slot, 1, 0.0, &x_zp));
  KILN_RETURN_IF_ERROR(param_values(ctx, w_zp_slot, p->out_channels, 0.0, &w_zp));
  const Tensor x = centered(ctx.input(0), x_zp), w = centered(ctx.input(w_slot), w_zp);
  const Tensor b = b_slot >= 0 && ctx.has_input(b_slot) ? ctx.input(b_slot).to(DType::kFloat64) : Tensor();
  *acc = Tensor(DType::kFloat64, output_shape(*p));
  conv_forward<double>(*p, x.data_as<double>(), w.data_as<double>(),
                       b.defined() ? b.data_as<double>() : nullptr, acc->data_as<double>());
  return Status::OK();
}

Status run_conv_integer(KernelContext& ctx) {
  ConvProblem p;
  Tensor acc;
  KILN_RETURN_IF_ERROR(accumulate(ctx, 1, 2, 3, -1, &p, &acc));
  Tensor& y = ctx.alloc_output(0, DType::kInt32, output_shape(p));
  const double* a = acc.data_as<double>();
  int32_t* out = y.data_as<int32_t>();
  for (int64_t i = 0; i < y.numel(); ++i) out[i] = static_cast<int32_t>(a[i]);
  return Status::OK();
}

// y = saturate(round_half_even(acc * x_scale * w_scale[m] / y_scale) + y_zero_point).
Status run_qlinear_conv(KernelContext& ctx) {
  ConvProblem p;
  Tensor acc;
  KILN_RETURN_IF_ERROR(accumulate(ctx, 3, 2, 5, 8, &p, &acc));
  std::vector<double> x_scale, w_scale, y_scale, y_zp;
  KILN_RETURN_IF_ERROR(param_values(ctx, 1, 1, 1.0, &x_scale));
  KILN_RETURN_IF_ERROR(param_values(ctx, 4, p.out_channels, 1.0, &w_scale));
  KILN_RETURN_IF_ERROR(param_values(ctx, 6, 1, 1.0, &y_scale));
  KILN_RETURN_IF_ERROR(param_values(ctx, 7, 1, 0.0, &y_zp));
  const DType out_type = ctx.input(7).dtype();
  Tensor& y = ctx.alloc_output(0, out_type, output_shape(p));
  const int64_t plane = p.out_channels == 0 ? 0 : acc.numel() / (p.batch * p.out_channels);
  const double* a = acc.data_as<double>();
  const bool ok = dispatch<Int8Types>(out_type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* out = y.data_as<T>();
    const double lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
    for (int64_t i = 0; i < y.numel(); ++i) {
      const int64_t m = plane == 0 ? 0 : (i / plane) % p.out_channels;
      // The scale product is formed in float, as the ONNX reference and ONNX Runtime do.
      const float scale = static_cast<float>(x_scale[0]) *
                          static_cast<float>(w_scale[w_scale.size() == 1 ? 0 : m]) /
                          static_cast<float>(y_scale[0]);
      const double q = std::nearbyint(static_cast<double>(static_cast<float>(a[i]) * scale)) + y_zp[0];
      out[i] = static_cast<T>(std::clamp(q, lo, hi));
    }
  });
  if (!ok) return unsupported("QLinearConv output dtype {} is not supported", dtype_name(out_type));
  return Status::OK();
}

}  // namespace

void register_conv_quant_kernels(KernelRegistry& r) {
  r.add("ConvInteger", run_conv_integer);
  r.add("QLinearConv", run_qlinear_conv);
}

}  // namespace kiln::cpu
