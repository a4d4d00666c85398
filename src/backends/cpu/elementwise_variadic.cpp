// CPU kernels of the variadic broadcasting ops Max, Min, Sum and Mean. Inputs fold into an
// output-shaped accumulator in the compute type, so fp16/bf16 round once, at the end.
#include <cmath>
#include <vector>

#include "backends/cpu/elementwise_kernels.h"

namespace kiln::cpu {
namespace {

// NaN wins in Max and Min, as in numpy's maximum/minimum (the ONNX reference).
template <class C>
bool is_nan(C v) {
  if constexpr (std::is_floating_point_v<C>) return std::isnan(v);
  else return false;
}

struct MaxFn {
  template <class C>
  C operator()(C a, C b) const { return is_nan(a) || a > b ? a : b; }
};
struct MinFn {
  template <class C>
  C operator()(C a, C b) const { return is_nan(a) || a < b ? a : b; }
};
struct SumFn {
  template <class C>
  C operator()(C a, C b) const { return a + b; }
};

// acc = f(acc, x) with x broadcast to the accumulator's (the output's) shape.
template <class T, class F>
void fold_into(std::vector<compute_t<T>>& acc, const std::vector<int64_t>& out_shape, const Tensor& x, const F& f) {
  using C = compute_t<T>;
  const T* px = x.data_as<T>();
  auto row = [&](int64_t o, const std::array<int64_t, 1>& off, const std::array<int64_t, 1>& step, int64_t n) {
    for (int64_t k = 0; k < n; ++k) acc[o + k] = f(acc[o + k], static_cast<C>(px[off[0] + k * step[0]]));
  };
  for_each_broadcast_row<1>(out_shape, {&x.shape()}, row);
}

// Registers a variadic op folding its inputs with F; Mean divides the sum by the count.
template <class List, class F>
void register_variadic(KernelRegistry& r, const std::string& op, bool mean = false) {
  r.add(op, [op, mean](KernelContext& ctx) {
    Tensor& y = ctx.alloc_output(0);
    const bool ok = dispatch<List>(ctx.input(0).dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = compute_t<T>;
      std::vector<C> acc(static_cast<size_t>(y.numel()));
      // The first input initializes the accumulator, so no identity element is needed.
      fold_into<T>(acc, y.shape(), ctx.input(0), [](C, C x) { return x; });
      for (int i = 1; i < ctx.num_inputs(); ++i) fold_into<T>(acc, y.shape(), ctx.input(i), F{});
      T* py = y.data_as<T>();
      const C count = static_cast<C>(ctx.num_inputs());
      for (size_t k = 0; k < acc.size(); ++k) py[k] = convert<T>(mean ? acc[k] / count : acc[k]);
    });
    if (!ok) return unsupported("{} has no CPU kernel for {}", op, dtype_name(ctx.input(0).dtype()));
    return Status::OK();
  });
}

}  // namespace

void register_variadic_kernels(KernelRegistry& r) {
  register_variadic<NumericTypes, MaxFn>(r, "Max");
  register_variadic<NumericTypes, MinFn>(r, "Min");
  register_variadic<IeeeFloatTypes, SumFn>(r, "Sum");
  register_variadic<IeeeFloatTypes, SumFn>(r, "Mean", /*mean=*/true);
}

}  // namespace kiln::cpu
