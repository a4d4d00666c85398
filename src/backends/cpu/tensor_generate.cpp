// CPU kernels that make new tensors from scalars or masks: ConstantOfShape, Range, Dropout,
// Trilu.
#include <algorithm>
#include <cstring>
#include <random>

#include "backends/cpu/tensor.h"
#include "backends/cpu/tensor_copy.h"
#include "core/dispatch.h"
#include "core/error.h"
#include "ops/shape_util.h"
#include "ops/tensor.h"

namespace kiln::cpu {
namespace {

// A scalar of dtype `t` holding `v`.
Tensor scalar_of(DType t, float v) {
  Tensor s(DType::kFloat32, {});
  *s.data_as<float>() = v;
  return s.to(t);
}

Status constant_of_shape_kernel(KernelContext& ctx) {
  const Tensor* value = ctx.node().attr_t("value");
  const Tensor v = value ? *value : scalar_of(DType::kFloat32, 0.0f);
  fill_elements(v.data(), &ctx.alloc_output(0));
  return Status::OK();
}

Status range_kernel(KernelContext& ctx) {
  Tensor& out = ctx.alloc_output(0);
  const bool ok = dispatch<ops::RangeTypes>(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    // Each element from start directly (not by repeated addition), so errors do not build up.
    using Acc = std::conditional_t<std::is_integral_v<T>, int64_t, double>;
    const Acc start = static_cast<Acc>(static_cast<compute_t<T>>(*ctx.input(0).data_as<T>()));
    const Acc delta = static_cast<Acc>(static_cast<compute_t<T>>(*ctx.input(2).data_as<T>()));
    T* o = out.data_as<T>();
    for (int64_t i = 0; i < out.numel(); ++i) o[i] = convert<T>(start + static_cast<Acc>(i) * delta);
  });
  if (!ok) return unsupported("Range does not accept {}", dtype_name(out.dtype()));
  return Status::OK();
}

// Dropout's seed: the spec says float, but models (the ONNX tests among them) also store an int.
uint32_t dropout_seed(const ir::Node& node) {
  const ir::Attribute* a = node.attr("seed");
  if (!a) return std::random_device{}();
  return static_cast<uint32_t>(a->kind == ir::Attribute::Kind::kFloat ? static_cast<int64_t>(a->f) : a->i);
}

// A uniform double in [0, 1) from two 32-bit draws, the way numpy's legacy random_sample makes
// it; with the same seed the masks match the ONNX reference implementation's.
double uniform01(std::mt19937& gen) {
  const uint32_t a = gen() >> 5, b = gen() >> 6;
  return (a * 67108864.0 + b) / 9007199254740992.0;
}

// Training-mode dropout: zeroes each element with probability `ratio`, scales the rest by
// 1 / (1 - ratio) so the expected value is unchanged.
Status random_dropout(KernelContext& ctx, double ratio) {
  const Tensor& in = ctx.input(0);
  Tensor& out = ctx.alloc_output(0);
  Tensor mask(ctx.node().opset < 10 ? in.dtype() : DType::kBool, in.shape());
  const Tensor one = scalar_of(mask.dtype(), 1.0f);
  const size_t mask_size = dtype_size(mask.dtype());
  std::mt19937 gen(dropout_seed(ctx.node()));
  const bool ok = dispatch<FloatTypes>(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const double scale = 1.0 / (1.0 - ratio);
    const T* x = in.data_as<T>();
    T* y = out.data_as<T>();
    auto* m = static_cast<std::byte*>(mask.data());
    for (int64_t i = 0; i < in.numel(); ++i) {
      if (uniform01(gen) < ratio) continue;  // outputs and mask start zeroed
      y[i] = convert<T>(static_cast<double>(static_cast<compute_t<T>>(x[i])) * scale);
      std::memcpy(m + i * mask_size, one.data(), mask_size);
    }
  });
  if (!ok) return unsupported("Dropout does not accept {}", dtype_name(in.dtype()));
  if (ctx.has_output(1)) ctx.set_output(1, mask);
  return Status::OK();
}

Status dropout_kernel(KernelContext& ctx) {
  double ratio = 0.5;
  if (ctx.has_input(1)) {
    std::vector<double> r;
    KILN_RETURN_IF_ERROR(ops::tensor_to_doubles(ctx.input(1), &r));
    KILN_ENSURE(r.size() == 1, "ratio must be a scalar");
    ratio = r[0];
  }
  const bool training = ctx.has_input(2) && ctx.input(2).numel() == 1 && *ctx.input(2).data_as<bool>();
  if (training && ratio > 0) return random_dropout(ctx, ratio);
  ctx.set_output(0, ctx.input(0));  // inference: identity, every element kept
  if (ctx.has_output(1)) {
    Tensor& mask = ctx.alloc_output(1);
    fill_elements(scalar_of(mask.dtype(), 1.0f).data(), &mask);
  }
  return Status::OK();
}

Status trilu_kernel(KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  Tensor& out = ctx.alloc_output(0);
  int64_t k = 0;
  if (ctx.has_input(1)) {
    std::vector<int64_t> kv;
    KILN_RETURN_IF_ERROR(ops::tensor_to_ints(ctx.input(1), &kv));
    KILN_ENSURE(kv.size() == 1, "k must be a scalar");
    k = kv[0];
  }
  const bool upper = ctx.node().attr_i("upper", 1) != 0;
  const int64_t rows = in.dim(-2), cols = in.dim(-1);
  k = std::clamp<int64_t>(k, -rows - 1, cols + 1);  // beyond this every row is all or nothing
  const size_t es = dtype_size(in.dtype());
  const auto* src = static_cast<const std::byte*>(in.data());
  auto* dst = static_cast<std::byte*>(out.data());
  const int64_t matrices = rows * cols == 0 ? 0 : in.numel() / (rows * cols);
  // Row i keeps columns j with j - i >= k (upper) or j - i <= k (lower): one contiguous run.
  for (int64_t m = 0; m < matrices; ++m) {
    for (int64_t i = 0; i < rows; ++i) {
      const int64_t lo = upper ? std::clamp<int64_t>(i + k, 0, cols) : 0;
      const int64_t hi = upper ? cols : std::clamp<int64_t>(i + k + 1, 0, cols);
      const int64_t row = (m * rows + i) * cols;
      if (hi > lo) std::memcpy(dst + (row + lo) * es, src + (row + lo) * es, (hi - lo) * es);
    }
  }
  return Status::OK();
}

}  // namespace

void register_tensor_generate_kernels(KernelRegistry& r) {
  r.add("ConstantOfShape", constant_of_shape_kernel);
  r.add("Range", range_kernel);
  r.add("Dropout", dropout_kernel);
  r.add("Trilu", trilu_kernel);
}

}  // namespace kiln::cpu
