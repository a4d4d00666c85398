// CPU Softmax, LogSoftmax and Hardmax over the [outer, axis_len, inner] view that
// ops::softmax_geometry gives (which encodes the opset < 13 flattening).
#include <cmath>
#include <limits>

#include "backends/cpu/matmul.h"
#include "core/error.h"
#include "ops/matmul.h"

namespace kiln::cpu {
namespace {

enum class Mode { kSoftmax, kLogSoftmax, kHardmax };

// Normalizes one line of `len` values, `stride` apart, from x into y.
template <class T>
void normalize_line(Mode mode, const T* x, T* y, int64_t len, int64_t stride) {
  using C = compute_t<T>;
  C max = -std::numeric_limits<C>::infinity();
  int64_t argmax = 0;
  for (int64_t i = 0; i < len; ++i) {
    const C v = static_cast<C>(x[i * stride]);
    if (v > max) {
      max = v;
      argmax = i;
    }
  }
  if (mode == Mode::kHardmax) {
    for (int64_t i = 0; i < len; ++i) y[i * stride] = T(i == argmax ? C(1) : C(0));
    return;
  }
  C sum = 0;
  for (int64_t i = 0; i < len; ++i) sum += std::exp(static_cast<C>(x[i * stride]) - max);
  const C log_sum = std::log(sum);
  for (int64_t i = 0; i < len; ++i) {
    const C shifted = static_cast<C>(x[i * stride]) - max;
    y[i * stride] = T(mode == Mode::kSoftmax ? std::exp(shifted) / sum : shifted - log_sum);
  }
}

Kernel make_kernel(Mode mode) {
  return [mode](KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    ops::SoftmaxGeometry g;
    KILN_RETURN_IF_ERROR(ops::softmax_geometry(ctx.node(), x.shape(), &g));
    Tensor& y = ctx.alloc_output(0);
    const bool ok = dispatch<IeeeFloatTypes>(x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* xp = x.data_as<T>();
      T* yp = y.data_as<T>();
      for (int64_t o = 0; o < g.outer; ++o) {
        for (int64_t i = 0; i < g.inner; ++i) {
          const int64_t base = o * g.axis_len * g.inner + i;
          normalize_line(mode, xp + base, yp + base, g.axis_len, g.inner);
        }
      }
    });
    return ok ? Status::OK() : unsupported("dtype {} is not supported", dtype_name(x.dtype()));
  };
}

}  // namespace

void register_softmax_kernels(KernelRegistry& r) {
  r.add("Softmax", make_kernel(Mode::kSoftmax));
  r.add("LogSoftmax", make_kernel(Mode::kLogSoftmax));
  r.add("Hardmax", make_kernel(Mode::kHardmax));
}

}  // namespace kiln::cpu
