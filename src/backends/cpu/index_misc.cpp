// CPU NonZero, OneHot and CumSum.
#include <cmath>

#include "backends/cpu/index.h"

namespace kiln::cpu {
namespace {

// Output [rank, count]: the coordinates of each non-zero element, in row-major order.
Status nonzero(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  std::vector<int64_t> hits;
  const bool ok = dispatch<AllTypes>(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = x.data_as<T>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      if (ops::is_nonzero(p[i])) hits.push_back(i);
    }
  });
  if (!ok) return unsupported("dtype {} is not supported", dtype_name(x.dtype()));
  const auto n = static_cast<int64_t>(hits.size());
  Tensor& out = ctx.alloc_output(0, DType::kInt64, {x.rank(), n});
  auto* op = out.data_as<int64_t>();
  const auto strides = strides_of(x.shape());
  for (int64_t j = 0; j < n; ++j) {
    for (int d = 0; d < x.rank(); ++d) op[d * n + j] = (hits[j] / strides[d]) % x.dim(d);
  }
  return Status::OK();
}

// Indices may have any numeric type; they are truncated to integers. Out-of-range indices
// give an all-"off" line, as the spec says (no error).
Status onehot(KernelContext& ctx) {
  std::vector<double> idx, depth_v;
  KILN_RETURN_IF_ERROR(ops::tensor_to_doubles(ctx.input(0), &idx));
  KILN_RETURN_IF_ERROR(ops::tensor_to_doubles(ctx.input(1), &depth_v));
  const Tensor& values = ctx.input(2);
  KILN_ENSURE(values.numel() == 2, "values must hold [off, on], got {} elements", values.numel());
  const auto depth = static_cast<int64_t>(depth_v.at(0));
  Tensor& out = ctx.alloc_output(0);
  int64_t axis = 0;
  KILN_RETURN_IF_ERROR(ops::normalize_axis(ctx.node().attr_i("axis", -1), out.rank(), &axis));
  const AxisView v(out.shape(), axis);  // indices are [outer, inner]
  dispatch_by_size(values.dtype(), [&](auto tag) {
    using U = typename decltype(tag)::type;
    const U off = values.data_as<U>()[0], on = values.data_as<U>()[1];
    U* op = out.data_as<U>();
    std::fill(op, op + out.numel(), off);
    for (int64_t o = 0; o < v.outer; ++o) {
      for (int64_t in = 0; in < v.inner; ++in) {
        auto i = static_cast<int64_t>(std::trunc(idx[o * v.inner + in]));
        if (i < 0) i += depth;
        if (i >= 0 && i < depth) op[(o * depth + i) * v.inner + in] = on;
      }
    }
  });
  return Status::OK();
}

template <class T>
void cumsum_lines(const Tensor& x, const AxisView& v, bool exclusive, bool reverse, Tensor* out) {
  using C = compute_t<T>;
  const T* xp = x.data_as<T>();
  T* op = out->data_as<T>();
  for (int64_t o = 0; o < v.outer; ++o) {
    for (int64_t in = 0; in < v.inner; ++in) {
      const int64_t base = o * v.len * v.inner + in;
      C sum = 0;
      for (int64_t s = 0; s < v.len; ++s) {
        const int64_t at = base + (reverse ? v.len - 1 - s : s) * v.inner;
        const C cur = static_cast<C>(xp[at]);
        if (!exclusive) sum += cur;
        op[at] = T(sum);
        if (exclusive) sum += cur;
      }
    }
  }
}

Status cumsum(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  std::vector<int64_t> axis_v;
  KILN_RETURN_IF_ERROR(ops::tensor_to_ints(ctx.input(1), &axis_v));
  KILN_ENSURE(axis_v.size() == 1, "axis must hold one value, got {}", axis_v.size());
  int64_t axis = 0;
  KILN_RETURN_IF_ERROR(ops::normalize_axis(axis_v[0], x.rank(), &axis));
  const bool exclusive = ctx.node().attr_i("exclusive", 0) != 0;
  const bool reverse = ctx.node().attr_i("reverse", 0) != 0;
  Tensor& out = ctx.alloc_output(0);
  const AxisView v(x.shape(), axis);
  using CumSumTypes = TypeList<float, double, float16, bfloat16, int32_t, int64_t, uint32_t, uint64_t>;
  const bool ok = dispatch<CumSumTypes>(x.dtype(), [&](auto tag) {
    cumsum_lines<typename decltype(tag)::type>(x, v, exclusive, reverse, &out);
  });
  return ok ? Status::OK() : unsupported("dtype {} is not supported", dtype_name(x.dtype()));
}

}  // namespace

void register_index_misc_kernels(KernelRegistry& r) {
  r.add("NonZero", nonzero);
  r.add("OneHot", onehot);
  r.add("CumSum", cumsum);
}

}  // namespace kiln::cpu
