// CPU kernels for Cast and CastLike; the quantization kernels are in cast_quant_linear.cpp.
#include "backends/cpu/cast_quant.h"

#include "core/error.h"

namespace kiln::cpu {
namespace {

// Casts `in` to the dtype inference chose for output 0 (Cast's `to`, CastLike's target).
Status cast_kernel(KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  const bool saturate = ctx.node().attr_i("saturate", 1) != 0;
  if (ctx.inferred(0).dtype == in.dtype()) {
    ctx.set_output(0, in);  // no conversion: share the storage (tensors are immutable)
    return Status::OK();
  }
  Tensor& out = ctx.alloc_output(0);
  bool ok = false;
  dispatch<AllTypes>(in.dtype(), [&](auto from_tag) {
    using From = typename decltype(from_tag)::type;
    ok = dispatch<AllTypes>(out.dtype(), [&](auto to_tag) {
      using To = typename decltype(to_tag)::type;
      const From* src = in.data_as<From>();
      To* dst = out.data_as<To>();
      const int64_t n = in.numel();
      for (int64_t i = 0; i < n; ++i) dst[i] = cast_value<To>(src[i], saturate);
    });
  });
  if (!ok) return unsupported("Cast from {} to {} is not supported", dtype_name(in.dtype()), dtype_name(out.dtype()));
  return Status::OK();
}

}  // namespace

void register_cast_quant_kernels(KernelRegistry& r) {
  r.add("Cast", cast_kernel);
  r.add("CastLike", cast_kernel);
  register_quant_linear_kernels(r);
}

}  // namespace kiln::cpu
