// CPU TopK, ArgMax and ArgMin.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "backends/cpu/index.h"

namespace kiln::cpu {
namespace {

// Strict "a ranks before b" for TopK: by value (NaN counts as the largest, so the order
// stays strict-weak), ties broken by the lower index as the spec asks.
template <class C>
struct TopKOrder {
  const C* v;
  bool largest;
  static bool less(C a, C b) {
    if constexpr (std::is_floating_point_v<C>) {
      if (std::isnan(a)) return false;
      if (std::isnan(b)) return true;
    }
    return a < b;
  }
  bool operator()(int64_t a, int64_t b) const {
    if (less(v[a], v[b])) return !largest;
    if (less(v[b], v[a])) return largest;
    return a < b;
  }
};

template <class T>
Status run_topk(KernelContext& ctx) {
  using C = compute_t<T>;
  const Tensor& x = ctx.input(0);
  int64_t axis = 0;
  KILN_RETURN_IF_ERROR(ops::normalize_axis(ctx.node().attr_i("axis", -1), x.rank(), &axis));
  const int64_t k = ctx.inferred(0).concrete()[axis];
  const bool largest = ctx.node().attr_i("largest", 1) != 0;
  const AxisView v(x.shape(), axis);
  Tensor& values = ctx.alloc_output(0);
  Tensor& indices = ctx.alloc_output(1);
  const T* xp = x.data_as<T>();
  T* vp = values.data_as<T>();
  auto* ip = indices.data_as<int64_t>();
  std::vector<C> line(static_cast<size_t>(v.len));
  std::vector<int64_t> order(static_cast<size_t>(v.len));
  for (int64_t o = 0; o < v.outer; ++o) {
    for (int64_t in = 0; in < v.inner; ++in) {
      const int64_t base = o * v.len * v.inner + in;
      for (int64_t i = 0; i < v.len; ++i) line[i] = static_cast<C>(xp[base + i * v.inner]);
      std::iota(order.begin(), order.end(), 0);
      // Sorted output even when sorted=0: any order is allowed then, and this one is stable.
      std::partial_sort(order.begin(), order.begin() + k, order.end(), TopKOrder<C>{line.data(), largest});
      const int64_t out_base = o * k * v.inner + in;
      for (int64_t j = 0; j < k; ++j) {
        vp[out_base + j * v.inner] = xp[base + order[j] * v.inner];
        ip[out_base + j * v.inner] = order[j];
      }
    }
  }
  return Status::OK();
}

template <class T>
void run_arg(KernelContext& ctx, bool is_max) {
  using C = compute_t<T>;
  const Tensor& x = ctx.input(0);
  int64_t axis = 0;
  KILN_ASSERT(ops::normalize_axis(ctx.node().attr_i("axis", 0), x.rank(), &axis).ok(), "checked by the caller");
  const bool last = ctx.node().attr_i("select_last_index", 0) != 0;
  const AxisView v(x.shape(), axis);
  Tensor& out = ctx.alloc_output(0);
  const T* xp = x.data_as<T>();
  auto* op = out.data_as<int64_t>();
  for (int64_t o = 0; o < v.outer; ++o) {
    for (int64_t in = 0; in < v.inner; ++in) {
      const T* line = xp + o * v.len * v.inner + in;
      int64_t best = 0;
      C best_v = static_cast<C>(line[0]);
      for (int64_t i = 1; i < v.len; ++i) {
        const C c = static_cast<C>(line[i * v.inner]);
        const bool better = is_max ? (c > best_v || (last && c == best_v)) : (c < best_v || (last && c == best_v));
        if (better) {
          best = i;
          best_v = c;
        }
      }
      op[o * v.inner + in] = best;
    }
  }
}

Kernel arg_kernel(bool is_max) {
  return [is_max](KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    int64_t axis = 0;
    KILN_RETURN_IF_ERROR(ops::normalize_axis(ctx.node().attr_i("axis", 0), x.rank(), &axis));
    KILN_ENSURE(x.rank() == 0 || x.dim(static_cast<int>(axis)) > 0, "{} over an empty axis", ctx.node().op_type);
    const bool ok = dispatch<NumericTypes>(ctx.input(0).dtype(), [&](auto tag) {
      run_arg<typename decltype(tag)::type>(ctx, is_max);
    });
    return ok ? Status::OK() : unsupported("dtype {} is not supported", dtype_name(ctx.input(0).dtype()));
  };
}

}  // namespace

void register_select_kernels(KernelRegistry& r) {
  r.add("TopK", [](KernelContext& ctx) {
    Status st = unsupported("dtype {} is not supported", dtype_name(ctx.input(0).dtype()));
    dispatch<NumericTypes>(ctx.input(0).dtype(), [&](auto tag) { st = run_topk<typename decltype(tag)::type>(ctx); });
    return st;
  });
  r.add("ArgMax", arg_kernel(true));
  r.add("ArgMin", arg_kernel(false));
}

}  // namespace kiln::cpu
