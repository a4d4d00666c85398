// CPU kernels for the Reduce* ops. One odometer walk over the input maps every element to
// its output slot; each op is a small policy (init, accumulate, finish) over an accumulator
// type wide enough not to lose precision (double for floats, 64-bit for integers).
#include <cmath>
#include <limits>
#include <memory>
#include <algorithm>
#include <type_traits>

#include "backends/cpu/kernel.h"
#include "backends/cpu/reduce.h"
#include "core/dispatch.h"
#include "core/error.h"
#include "ops/reduce.h"

namespace kiln::cpu {
namespace {

template <class T>
using acc_t = std::conditional_t<std::is_floating_point_v<compute_t<T>>, double,
                                 std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>;

// ReduceMax/ReduceMin also accept bool (opset 20).
using MinMaxTypes = TypeList<float, double, float16, bfloat16, int8_t, int16_t, int32_t, int64_t, uint8_t,
                             uint16_t, uint32_t, uint64_t, bool>;

enum class Op { kSum, kMean, kProd, kMax, kMin, kL1, kL2, kSumSquare, kLogSum, kLogSumExp };

template <Op op, class T>
struct Policy {
  using A = std::conditional_t<op == Op::kMax || op == Op::kMin, compute_t<T>, acc_t<T>>;

  static A init() {
    if constexpr (op == Op::kProd) return A(1);
    if constexpr (op == Op::kMax || op == Op::kMin) {
      constexpr bool lo = op == Op::kMax;  // max starts at the lowest value, min at the highest
      if constexpr (std::is_floating_point_v<A>) {
        return lo ? -std::numeric_limits<A>::infinity() : std::numeric_limits<A>::infinity();
      } else {
        return lo ? std::numeric_limits<A>::lowest() : std::numeric_limits<A>::max();
      }
    }
    return A(0);
  }
  static void add(A& acc, T raw) {
    const A x = static_cast<A>(static_cast<compute_t<T>>(raw));
    if constexpr (op == Op::kProd) {
      acc *= x;
    } else if constexpr (op == Op::kMax) {
      if (x > acc || x != x) acc = x;  // x != x: NaN propagates, as in numpy
    } else if constexpr (op == Op::kMin) {
      if (x < acc || x != x) acc = x;
    } else if constexpr (op == Op::kL1) {
      if constexpr (std::is_signed_v<A>) {
        acc += x < 0 ? -x : x;
      } else {
        acc += x;
      }
    } else if constexpr (op == Op::kL2 || op == Op::kSumSquare) {
      acc += x * x;
    } else {
      acc += x;
    }
  }
  static T finish(A acc, int64_t count) {
    if constexpr (op == Op::kMean) {
      if (std::is_integral_v<A> && count == 0) return T(0);
      return saturate_cast<T>(static_cast<double>(acc) / static_cast<double>(count));
    } else if constexpr (op == Op::kL2) {
      return saturate_cast<T>(std::sqrt(static_cast<double>(acc)));
    } else if constexpr (op == Op::kLogSum) {
      return saturate_cast<T>(std::log(static_cast<double>(acc)));
    } else if constexpr (std::is_same_v<T, bool>) {
      return acc != 0;
    } else if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(acc);
    } else {
      return convert<T>(static_cast<compute_t<T>>(acc));
    }
  }
};

template <Op op, class T>
void reduce_typed(const Tensor& x, const ops::ReduceAxes& axes, Tensor& y) {
  using P = Policy<op, T>;
  const int64_t n_out = y.numel();
  const int64_t count = n_out == 0 ? 0 : x.numel() / n_out;
  const auto strides = reduce_output_strides(x.shape(), axes.reduced);
  const T* in = x.data_as<T>();
  T* out = y.data_as<T>();
  // Not std::vector: vector<bool> has no addressable elements.
  std::unique_ptr<typename P::A[]> acc(new typename P::A[n_out]);
  std::fill(acc.get(), acc.get() + n_out, P::init());
  for_each_reduced(x.shape(), strides, [&](int64_t i, int64_t o) { P::add(acc[o], in[i]); });
  for (int64_t o = 0; o < n_out; ++o) out[o] = P::finish(acc[o], count);
}

// log(sum(exp(x))) computed as max + log(sum(exp(x - max))) so large inputs do not overflow.
template <class T>
void reduce_log_sum_exp(const Tensor& x, const ops::ReduceAxes& axes, Tensor& y) {
  const int64_t n_out = y.numel();
  const auto strides = reduce_output_strides(x.shape(), axes.reduced);
  const T* in = x.data_as<T>();
  T* out = y.data_as<T>();
  auto value = [&](int64_t i) { return static_cast<double>(static_cast<compute_t<T>>(in[i])); };
  std::vector<double> mx(n_out, -std::numeric_limits<double>::infinity());
  for_each_reduced(x.shape(), strides, [&](int64_t i, int64_t o) { mx[o] = std::max(mx[o], value(i)); });
  std::vector<double> sum(n_out, 0.0);
  for_each_reduced(x.shape(), strides, [&](int64_t i, int64_t o) {
    if (std::isfinite(mx[o])) sum[o] += std::exp(value(i) - mx[o]);
  });
  for (int64_t o = 0; o < n_out; ++o) {
    out[o] = saturate_cast<T>(std::isfinite(mx[o]) ? mx[o] + std::log(sum[o]) : mx[o]);
  }
}

template <Op op>
Kernel reduce_kernel() {
  return [](KernelContext& ctx) -> Status {
    const Tensor& x = ctx.input(0);
    const Tensor* axes_t = ctx.has_input(1) && ctx.input(1).numel() > 0 ? &ctx.input(1) : nullptr;
    ops::ReduceAxes axes;
    KILN_RETURN_IF_ERROR(ops::resolve_reduce_axes(ctx.node(), axes_t, x.rank(), &axes));
    const bool keepdims = ctx.node().attr_i("keepdims", 1) != 0;
    Tensor& y = ctx.alloc_output(0, x.dtype(), ops::reduced_shape(x.shape(), axes, keepdims));
    bool ok = false;
    if constexpr (op == Op::kMax || op == Op::kMin) {
      ok = dispatch<MinMaxTypes>(x.dtype(), [&](auto tag) {
        reduce_typed<op, typename decltype(tag)::type>(x, axes, y);
      });
    } else {
      ok = dispatch<NumericTypes>(x.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (op == Op::kLogSumExp) {
          reduce_log_sum_exp<T>(x, axes, y);
        } else {
          reduce_typed<op, T>(x, axes, y);
        }
      });
    }
    if (!ok) return unsupported("{} does not support dtype {}", ctx.node().op_type, dtype_name(x.dtype()));
    return Status::OK();
  };
}

}  // namespace

void register_reduce_kernels(KernelRegistry& r) {
  r.add("ReduceSum", reduce_kernel<Op::kSum>());
  r.add("ReduceMean", reduce_kernel<Op::kMean>());
  r.add("ReduceProd", reduce_kernel<Op::kProd>());
  r.add("ReduceMax", reduce_kernel<Op::kMax>());
  r.add("ReduceMin", reduce_kernel<Op::kMin>());
  r.add("ReduceL1", reduce_kernel<Op::kL1>());
  r.add("ReduceL2", reduce_kernel<Op::kL2>());
  r.add("ReduceSumSquare", reduce_kernel<Op::kSumSquare>());
  r.add("ReduceLogSum", reduce_kernel<Op::kLogSum>());
  r.add("ReduceLogSumExp", reduce_kernel<Op::kLogSumExp>());
}

}  // namespace kiln::cpu
