// CPU DynamicQuantizeLinear and QLinearMatMul.
#include <algorithm>
#include <cmath>
#include <limits>

#include "backends/cpu/kernel.h"
#include "backends/cpu/matmul.h"
#include "core/dispatch.h"
#include "core/error.h"
#include "ops/matmul.h"

namespace kiln::cpu {

namespace {

// uint8 range, as the spec fixes it: scale spans [min(0, min x), max(0, max x)] over 255 steps
// (1/255 when that range is empty); everything rounds half to even and saturates.
Status run_dynamic_quantize_linear(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const float* v = x.data_as<float>();
  float lo = 0.f, hi = 0.f;
  for (int64_t i = 0; i < x.numel(); ++i) {
    lo = std::min(lo, v[i]);
    hi = std::max(hi, v[i]);
  }
  const float scale = (hi == lo ? 1.f : hi - lo) / 255.f;
  const float zp = std::nearbyint(std::clamp(0.f - lo / scale, 0.f, 255.f));
  uint8_t* y = ctx.alloc_output(0).data_as<uint8_t>();
  for (int64_t i = 0; i < x.numel(); ++i)
    y[i] = static_cast<uint8_t>(std::clamp(std::nearbyint(v[i] / scale) + zp, 0.f, 255.f));
  if (ctx.has_output(1)) ctx.alloc_output(1).data_as<float>()[0] = scale;
  if (ctx.has_output(2)) ctx.alloc_output(2).data_as<uint8_t>()[0] = static_cast<uint8_t>(zp);
  return Status::OK();
}

using QTypes = TypeList<int8_t, uint8_t, float8e4m3fn, float8e5m2>;

// Values of a scale or zero point as doubles: one value (per tensor) or `along` values.
Status qparam(const KernelContext& ctx, int slot, int64_t along, std::vector<double>* out) {
  const Tensor& t = ctx.input(slot);
  KILN_ENSURE(t.numel() == 1 || t.numel() == along, "input {} has {} values; expected 1 or {}", slot, t.numel(),
              along);
  const Tensor d = t.to(DType::kFloat64);
  out->assign(d.data_as<double>(), d.data_as<double>() + d.numel());
  return Status::OK();
}

double pick(const std::vector<double>& v, int64_t i) { return v.size() == 1 ? v[0] : v[i]; }

// An operand minus its zero point, as float64 (exact for 8-bit values). A's zero point is
// per row (second-to-last dim), B's per column (last dim).
Status centered(const KernelContext& ctx, int operand, bool per_row, std::vector<double>* out) {
  const Tensor& t = ctx.input(operand);
  const int64_t cols = t.dim(-1), rows = t.rank() >= 2 ? t.dim(-2) : 1;
  std::vector<double> zp;
  KILN_RETURN_IF_ERROR(qparam(ctx, operand + 2, per_row ? rows : cols, &zp));
  const Tensor d = t.to(DType::kFloat64);
  const double* p = d.data_as<double>();
  out->resize(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) (*out)[i] = p[i] - pick(zp, per_row ? (i / cols) % rows : i % cols);
  return Status::OK();
}

// Offset of the batch element `b` of an operand whose batch dims are `dims` (broadcast 1s).
int64_t batch_offset(int64_t b, const std::vector<int64_t>& batch, const std::vector<int64_t>& dims,
                     int64_t matrix) {
  int64_t off = 0, stride = matrix;
  for (int i = static_cast<int>(batch.size()) - 1; i >= 0; --i) {
    const int64_t idx = b % batch[i];
    b /= batch[i];
    if (dims[i] != 1) off += idx * stride;
    stride *= dims[i];
  }
  return off;
}

// y = saturate(round_half_even((a - a_zp) @ (b - b_zp) * a_scale * b_scale / y_scale) + y_zp).
Status run_qlinear_matmul(KernelContext& ctx) {
  ops::MatMulShape s;
  KILN_RETURN_IF_ERROR(ops::matmul_shape(ctx.input(0).shape(), ctx.input(3).shape(), &s));
  const Tensor& a_t = ctx.input(0);
  const Tensor& b_t = ctx.input(3);
  const int64_t a_rows = a_t.rank() >= 2 ? a_t.dim(-2) : 1, b_cols = b_t.dim(-1);
  std::vector<double> a, b, a_scale, b_scale, y_scale, y_zp;
  KILN_RETURN_IF_ERROR(centered(ctx, 0, true, &a));
  KILN_RETURN_IF_ERROR(centered(ctx, 3, false, &b));
  KILN_RETURN_IF_ERROR(qparam(ctx, 1, a_rows, &a_scale));
  KILN_RETURN_IF_ERROR(qparam(ctx, 4, b_cols, &b_scale));
  KILN_RETURN_IF_ERROR(qparam(ctx, 6, 1, &y_scale));
  KILN_RETURN_IF_ERROR(qparam(ctx, 7, 1, &y_zp));

  const int64_t batches = Tensor::numel_of(s.batch);
  std::vector<double> acc(static_cast<size_t>(batches * s.m * s.n));
  for (int64_t bi = 0; bi < batches; ++bi) {
    gemm<double>(false, false, s.m, s.n, s.k, 1.0, a.data() + batch_offset(bi, s.batch, s.a_batch, s.m * s.k),
                 b.data() + batch_offset(bi, s.batch, s.b_batch, s.k * s.n), 0.0, acc.data() + bi * s.m * s.n);
  }
  const DType out_type = ctx.input(7).dtype();
  Tensor& y = ctx.alloc_output(0, out_type, s.out);
  const bool ok = dispatch<QTypes>(out_type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* out = y.data_as<T>();
    for (int64_t i = 0; i < y.numel(); ++i) {
      const int64_t row = (i / s.n) % s.m, col = i % s.n;
      // The scale product is formed in float, as the ONNX reference does.
      const float scale = static_cast<float>(pick(a_scale, row)) * static_cast<float>(pick(b_scale, col)) /
                          static_cast<float>(y_scale[0]);
      const double q = acc[i] * static_cast<double>(scale);
      if constexpr (std::is_integral_v<T>) {
        const double lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
        out[i] = static_cast<T>(std::clamp(std::nearbyint(q) + y_zp[0], lo, hi));
      } else {
        out[i] = convert<T>(static_cast<float>(q + y_zp[0]));  // fp8 conversion saturates
      }
    }
  });
  if (!ok) return unsupported("QLinearMatMul output dtype {} is not supported", dtype_name(out_type));
  return Status::OK();
}

}  // namespace

void register_extra_nn_norm_kernels(KernelRegistry& r);

void register_extra_nn_kernels(KernelRegistry& r) {
  r.add("DynamicQuantizeLinear", run_dynamic_quantize_linear);
  r.add("QLinearMatMul", run_qlinear_matmul);
  register_extra_nn_norm_kernels(r);
}

}  // namespace kiln::cpu
