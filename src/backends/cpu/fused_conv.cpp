// CPU reference kernels of kiln.FusedConv and kiln.FusedGemm (schemas in ops/fused_conv.cpp).
// The registered Conv / Gemm kernel computes the product in float (fp16/bf16 inputs are
// widened first), then the epilogue (residual, activation) runs in float and the result is
// rounded once to the output dtype, as a GPU epilogue does.
#include <algorithm>

#include "backends/cpu/kernel.h"
#include "core/error.h"
#include "ops/activation.h"

namespace kiln::cpu {
namespace {

Tensor as_float(const Tensor& t) { return t.dtype() == DType::kFloat32 ? t : t.to(DType::kFloat32); }

Status check_dtype(const KernelContext& ctx) {
  const DType t = ctx.input(0).dtype();
  if (t == DType::kFloat32 || t == DType::kFloat16 || t == DType::kBFloat16) return Status::OK();
  return unsupported("dtype {} is not supported", dtype_name(t));
}

// Index of element (n, c, s) of an [N, C, S] tensor stored channels-first or channels-last.
int64_t offset(bool channels_last, int64_t n, int64_t c, int64_t s, int64_t channels, int64_t size) {
  return channels_last ? (n * size + s) * channels + c : (n * channels + c) * size + s;
}

// A float (N, spatial..., C) tensor as (N, C, spatial...).
Tensor to_channels_first(const Tensor& t) {
  std::vector<int64_t> shape = t.shape();
  std::rotate(shape.begin() + 1, shape.end() - 1, shape.end());
  Tensor out(DType::kFloat32, shape);
  const int64_t n = shape[0], c = shape[1], size = Tensor::numel_of({shape.begin() + 2, shape.end()});
  const float* src = t.data_as<float>();
  float* dst = out.data_as<float>();
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t k = 0; k < c; ++k) {
      for (int64_t s = 0; s < size; ++s) dst[offset(false, i, k, s, c, size)] = src[offset(true, i, k, s, c, size)];
    }
  }
  return out;
}

// Runs the registered kernel of ONNX op `op_type` with this node's attributes on float
// `inputs` (nullptr for absent ones); returns its output 0, of type `out` in float.
Status run_float_kernel(const char* op_type, const KernelContext& ctx, std::vector<const Tensor*> inputs,
                        ir::TensorType out, Tensor* result) {
  const Kernel* kernel = KernelRegistry::instance().find("", op_type);
  KILN_ASSERT(kernel != nullptr, "the CPU backend has no {} kernel", op_type);
  out.dtype = DType::kFloat32;
  auto no_subgraphs = [](const ir::Graph&, std::vector<Tensor>*) {
    return Status(StatusCode::kUnsupported, "no subgraphs");
  };
  KernelContext inner(ctx.node(), std::move(inputs), {out}, no_subgraphs);
  KILN_RETURN_IF_ERROR((*kernel)(inner));
  *result = inner.outputs().at(0);
  return Status::OK();
}

Status run_fused_conv(KernelContext& ctx) {
  KILN_RETURN_IF_ERROR(check_dtype(ctx));
  ops::Activation act;
  KILN_RETURN_IF_ERROR(ops::activation_of(ctx.node(), &act));
  const bool channels_last = ctx.node().attr_i("channels_last", 0) != 0;
  const Tensor x = channels_last ? to_channels_first(as_float(ctx.input(0))) : as_float(ctx.input(0));
  const Tensor w = as_float(ctx.input(1));
  const Tensor b = ctx.has_input(2) ? as_float(ctx.input(2)) : Tensor();
  Tensor y;  // conv(X, W) + B, channels-first
  KILN_RETURN_IF_ERROR(
      run_float_kernel("Conv", ctx, {&x, &w, b.defined() ? &b : nullptr}, ctx.inferred(0), &y));

  std::vector<int64_t> out_shape = y.shape();
  if (channels_last) std::rotate(out_shape.begin() + 1, out_shape.begin() + 2, out_shape.end());
  const Tensor z = ctx.has_input(3) ? as_float(ctx.input(3)) : Tensor();
  KILN_ENSURE(!z.defined() || z.shape() == out_shape, "residual Z {} must have the output's shape {}",
              shape_to_string(z.shape()), shape_to_string(out_shape));

  // Epilogue: residual and activation, writing in the output layout.
  Tensor out(DType::kFloat32, out_shape);
  const int64_t n = y.dim(0), m = y.dim(1), size = Tensor::numel_of({y.shape().begin() + 2, y.shape().end()});
  const float* yp = y.data_as<float>();
  const float* zp = z.defined() ? z.data_as<float>() : nullptr;
  float* op = out.data_as<float>();
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t c = 0; c < m; ++c) {
      for (int64_t s = 0; s < size; ++s) {
        const int64_t o = offset(channels_last, i, c, s, m, size);
        const float v = yp[offset(false, i, c, s, m, size)];
        op[o] = act.apply(zp ? v + zp[o] : v);
      }
    }
  }
  const DType dtype = ctx.input(0).dtype();
  ctx.set_output(0, dtype == DType::kFloat32 ? out : out.to(dtype));
  return Status::OK();
}

Status run_fused_gemm(KernelContext& ctx) {
  KILN_RETURN_IF_ERROR(check_dtype(ctx));
  ops::Activation act;
  KILN_RETURN_IF_ERROR(ops::activation_of(ctx.node(), &act));
  const Tensor a = as_float(ctx.input(0)), b = as_float(ctx.input(1));
  const Tensor c = ctx.has_input(2) ? as_float(ctx.input(2)) : Tensor();
  Tensor y;
  KILN_RETURN_IF_ERROR(run_float_kernel("Gemm", ctx, {&a, &b, c.defined() ? &c : nullptr}, ctx.inferred(0), &y));
  float* p = y.data_as<float>();
  for (int64_t i = 0; i < y.numel(); ++i) p[i] = act.apply(p[i]);
  const DType dtype = ctx.input(0).dtype();
  ctx.set_output(0, dtype == DType::kFloat32 ? y : y.to(dtype));
  return Status::OK();
}

}  // namespace

void register_fused_kernels(KernelRegistry& r) {
  r.add("FusedConv", run_fused_conv, "kiln");
  r.add("FusedGemm", run_fused_gemm, "kiln");
}

}  // namespace kiln::cpu
