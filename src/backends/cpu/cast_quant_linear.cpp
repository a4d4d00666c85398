// CPU kernels for QuantizeLinear and DequantizeLinear (per-tensor, per-axis and blocked).
#include <cmath>

#include "backends/cpu/cast_quant.h"
#include "core/error.h"
#include "ops/cast_quant.h"
#include "ops/shape_util.h"

namespace kiln::cpu {
namespace {

using QuantizedTypes = TypeList<int8_t, uint8_t, int16_t, uint16_t, float8e4m3fn, float8e5m2>;
using QuantizeInputTypes = TypeList<float, float16, bfloat16, int32_t>;
using DivisionTypes = TypeList<float, double, float16, bfloat16>;
using DequantizeInputTypes = TypeList<int8_t, uint8_t, int16_t, uint16_t, int32_t, float8e4m3fn, float8e5m2>;
using DequantizeOutputTypes = TypeList<float, float16, bfloat16>;

// Rounds a double to the nearest value of D (identity for double).
template <class D>
inline double round_to(double v) {
  return static_cast<double>(static_cast<compute_t<D>>(cast_value<D>(v, true)));
}

// The scale (or zero point) as doubles, one per scale element; zeros when absent.
std::vector<double> per_scale_values(const KernelContext& ctx, int input, int64_t count) {
  std::vector<double> v;
  if (ctx.has_input(input)) {
    KILN_ASSERT(ops::tensor_to_doubles(ctx.input(input), &v).ok(), "unreadable quantization parameter");
  } else {
    v.assign(count, 0.0);
  }
  return v;
}

// x / scale for each element, both operands and the quotient rounded to D: the division
// happens in the precision ONNX prescribes (the scale's type or the `precision` attribute).
template <class X, class D>
std::vector<double> divide_by_scale(const Tensor& x, std::vector<double> scale, const ops::QuantLayout& layout) {
  for (double& s : scale) s = round_to<D>(s);
  const X* px = x.data_as<X>();
  std::vector<double> q(x.numel());
  ops::for_each_quant_element(layout, [&](int64_t i, int64_t si) {
    const double xv = round_to<D>(static_cast<double>(static_cast<compute_t<X>>(px[i])));
    q[i] = round_to<D>(xv / scale[si]);
  });
  return q;
}

// q + zero point, rounded half to even and saturated to Q's range (integers), or converted
// with the `saturate` rule (float8).
template <class Q>
void store_quantized(const std::vector<double>& q, const std::vector<double>& zp, const ops::QuantLayout& layout,
                     bool saturate, Q* out) {
  ops::for_each_quant_element(layout, [&](int64_t i, int64_t si) {
    if constexpr (std::is_integral_v<Q>) {
      out[i] = int_from_double<Q>(std::nearbyint(q[i]) + zp[si]);  // nearbyint: ties to even
    } else {
      out[i] = small_float_from_double<Q>(q[i] + zp[si], saturate);
    }
  });
}

// The type x / scale is computed in: `precision` when given, else the scale's type; an int32
// scale divides exactly (in double).
DType division_type(const ir::Node& node, DType scale_type) {
  const int64_t precision = node.attr_i("precision", 0);
  const DType t = precision != 0 ? dtype_from_onnx(static_cast<int>(precision)) : scale_type;
  return t == DType::kInt32 ? DType::kFloat64 : t;
}

Status quantize_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& scale = ctx.input(1);
  ops::QuantLayout layout;
  KILN_RETURN_IF_ERROR(ops::resolve_quant_layout(ctx.node(), x.shape(), scale.shape(), &layout));
  std::vector<double> q;
  const DType div = division_type(ctx.node(), scale.dtype());
  const bool ok = dispatch<QuantizeInputTypes>(x.dtype(), [&](auto x_tag) {
    dispatch<DivisionTypes>(div, [&](auto d_tag) {
      using X = typename decltype(x_tag)::type;
      using D = typename decltype(d_tag)::type;
      q = divide_by_scale<X, D>(x, per_scale_values(ctx, 1, 0), layout);
    });
  });
  KILN_ASSERT(ok && q.size() == static_cast<size_t>(x.numel()), "QuantizeLinear types not checked by inference");
  const std::vector<double> zp = per_scale_values(ctx, 2, scale.numel());
  const bool saturate = ctx.node().attr_i("saturate", 1) != 0;
  Tensor& out = ctx.alloc_output(0);
  dispatch<QuantizedTypes>(out.dtype(), [&](auto q_tag) {
    using Q = typename decltype(q_tag)::type;
    store_quantized<Q>(q, zp, layout, saturate, out.data_as<Q>());
  });
  return Status::OK();
}

// y = (x - zero_point) * scale, computed in float as the ONNX reference does.
template <class X, class Y>
void dequantize(const Tensor& x, const std::vector<double>& scale, const std::vector<double>& zp,
                const ops::QuantLayout& layout, Y* out) {
  const X* px = x.data_as<X>();
  ops::for_each_quant_element(layout, [&](int64_t i, int64_t si) {
    const double xv = static_cast<double>(static_cast<compute_t<X>>(px[i]));
    const float y = static_cast<float>(xv - zp[si]) * static_cast<float>(scale[si]);
    out[i] = cast_value<Y>(y, true);
  });
}

Status dequantize_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& scale = ctx.input(1);
  ops::QuantLayout layout;
  KILN_RETURN_IF_ERROR(ops::resolve_quant_layout(ctx.node(), x.shape(), scale.shape(), &layout));
  const std::vector<double> scales = per_scale_values(ctx, 1, 0);
  const std::vector<double> zp = per_scale_values(ctx, 2, scale.numel());
  Tensor& out = ctx.alloc_output(0);
  bool ok = false;
  dispatch<DequantizeInputTypes>(x.dtype(), [&](auto x_tag) {
    ok = dispatch<DequantizeOutputTypes>(out.dtype(), [&](auto y_tag) {
      using X = typename decltype(x_tag)::type;
      using Y = typename decltype(y_tag)::type;
      dequantize<X, Y>(x, scales, zp, layout, out.data_as<Y>());
    });
  });
  KILN_ASSERT(ok, "DequantizeLinear types not checked by inference");
  return Status::OK();
}

}  // namespace

void register_quant_linear_kernels(KernelRegistry& r) {
  r.add("QuantizeLinear", quantize_kernel);
  r.add("DequantizeLinear", dequantize_kernel);
}

}  // namespace kiln::cpu
