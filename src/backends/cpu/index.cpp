// CPU Gather, GatherElements, GatherND, ScatterND, ScatterElements (and Scatter).
#include "backends/cpu/index.h"

#include <algorithm>
#include <cstring>

namespace kiln::cpu {
namespace {

Status unsupported_dtype(DType t) { return unsupported("dtype {} is not supported", dtype_name(t)); }

int64_t axis_attr(const KernelContext& ctx, int rank) {
  int64_t axis = 0;
  KILN_ASSERT(ops::normalize_axis(ctx.node().attr_i("axis", 0), rank, &axis).ok(), "inference checked the axis");
  return axis;
}

Status gather(KernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  const int64_t axis = axis_attr(ctx, data.rank());
  const AxisView v(data.shape(), axis);
  std::vector<int64_t> idx;
  KILN_RETURN_IF_ERROR(read_indices(ctx.input(1), v.len, &idx));
  Tensor& out = ctx.alloc_output(0);
  const size_t chunk = static_cast<size_t>(v.inner) * dtype_size(data.dtype());
  const auto* src = static_cast<const std::byte*>(data.data());
  auto* dst = static_cast<std::byte*>(out.data());
  for (int64_t o = 0; o < v.outer; ++o) {
    for (int64_t i : idx) {
      std::memcpy(dst, src + (o * v.len + i) * chunk, chunk);
      dst += chunk;
    }
  }
  return Status::OK();
}

// Calls f(i, data_offset) for every element i of `indices` (GatherElements/ScatterElements
// addressing): the data offset is the element's own position with the axis coordinate
// replaced by its index.
template <class F>
Status for_each_element_index(const Tensor& data, const Tensor& indices, int64_t axis, F&& f) {
  KILN_ENSURE(indices.rank() == data.rank(), "indices rank {} differs from data rank {}", indices.rank(),
              data.rank());
  for (int d = 0; d < data.rank(); ++d) {
    KILN_ENSURE(d == axis || indices.dim(d) <= data.dim(d), "indices shape {} exceeds data shape {} at dim {}",
                shape_to_string(indices.shape()), shape_to_string(data.shape()), d);
  }
  std::vector<int64_t> idx;
  KILN_RETURN_IF_ERROR(read_indices(indices, data.rank() ? data.dim(static_cast<int>(axis)) : 1, &idx));
  const auto ds = strides_of(data.shape());
  const auto& shape = indices.shape();
  std::vector<int64_t> pos(shape.size(), 0);
  int64_t base = 0;  // data offset of `pos` without its axis coordinate
  for (size_t i = 0; i < idx.size(); ++i) {
    f(i, base + idx[i] * ds[axis]);
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
      if (d != axis) base += ds[d];
      if (++pos[d] < shape[d]) break;
      if (d != axis) base -= ds[d] * shape[d];
      pos[d] = 0;
    }
  }
  return Status::OK();
}

Status gather_elements(KernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  Tensor& out = ctx.alloc_output(0);
  Status st;
  dispatch_by_size(data.dtype(), [&](auto tag) {
    using U = typename decltype(tag)::type;
    const U* src = data.data_as<U>();
    U* dst = out.data_as<U>();
    st = for_each_element_index(data, ctx.input(1), axis_attr(ctx, data.rank()),
                                [&](size_t i, int64_t off) { dst[i] = src[off]; });
  });
  return st;
}

// GatherND/ScatterND addressing: data is [batch..., indexed..., slice...]; each index tuple
// (the last dim of `indices`) picks one slice. Calls f(tuple number, data element offset).
template <class F>
Status for_each_nd_slice(const Tensor& data, const Tensor& indices, int64_t batch_dims, int64_t* slice_size, F&& f) {
  const int64_t last = indices.dim(-1);
  KILN_ENSURE(last >= 1 && last <= data.rank() - batch_dims, "indices' last dim {} must be in [1, {}]", last,
              data.rank() - batch_dims);
  std::vector<int64_t> idx;
  KILN_RETURN_IF_ERROR(ops::tensor_to_ints(indices, &idx));
  const auto ds = strides_of(data.shape());
  *slice_size = batch_dims + last < data.rank() ? ds[batch_dims + last - 1] : 1;
  int64_t batches = 1;
  for (int64_t d = 0; d < batch_dims; ++d) batches *= data.dim(static_cast<int>(d));
  const int64_t tuples = static_cast<int64_t>(idx.size()) / last;
  const int64_t per_batch = batches ? tuples / batches : 0;
  const int64_t batch_stride = batch_dims ? ds[batch_dims - 1] : 0;
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t off = (per_batch ? t / per_batch : 0) * batch_stride;
    for (int64_t j = 0; j < last; ++j) {
      int64_t i = idx[t * last + j];
      KILN_RETURN_IF_ERROR(ops::normalize_index(i, data.dim(static_cast<int>(batch_dims + j)), &i));
      off += i * ds[batch_dims + j];
    }
    f(t, off);
  }
  return Status::OK();
}

Status gather_nd(KernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  const int64_t b = ctx.node().attr_i("batch_dims", 0);
  for (int64_t d = 0; d < b; ++d) {
    KILN_ENSURE(indices.dim(static_cast<int>(d)) == data.dim(static_cast<int>(d)),
                "batch dim {} differs between data {} and indices {}", d, shape_to_string(data.shape()),
                shape_to_string(indices.shape()));
  }
  Tensor& out = ctx.alloc_output(0);
  const size_t esize = dtype_size(data.dtype());
  const auto* src = static_cast<const std::byte*>(data.data());
  auto* dst = static_cast<std::byte*>(out.data());
  int64_t slice = 0;
  return for_each_nd_slice(data, indices, b, &slice, [&](int64_t t, int64_t off) {
    std::memcpy(dst + t * slice * esize, src + off * esize, slice * esize);
  });
}

template <class T>
void reduce_into(ops::ScatterReduction r, T& dst, T src) {
  using C = compute_t<T>;
  const C a = static_cast<C>(dst), b = static_cast<C>(src);
  switch (r) {
    case ops::ScatterReduction::kNone: dst = src; return;
    case ops::ScatterReduction::kAdd: dst = T(a + b); return;
    case ops::ScatterReduction::kMul: dst = T(a * b); return;
    case ops::ScatterReduction::kMax: dst = T(std::max(a, b)); return;
    case ops::ScatterReduction::kMin: dst = T(std::min(a, b)); return;
  }
}

// Runs scatter(T) for the output's element type: byte-sized copies for reduction "none"
// (any dtype), arithmetic types otherwise.
template <class Scatter>
Status dispatch_scatter(DType t, ops::ScatterReduction r, Scatter&& scatter) {
  if (r == ops::ScatterReduction::kNone) return dispatch_by_size(t, scatter) ? Status::OK() : unsupported_dtype(t);
  if (t == DType::kBool) return unsupported("scatter reductions on bool are not supported");
  return dispatch<NumericTypes>(t, scatter) ? Status::OK() : unsupported_dtype(t);
}

Status scatter_nd(KernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  const Tensor& updates = ctx.input(2);
  ops::ScatterReduction red;
  KILN_RETURN_IF_ERROR(ops::parse_scatter_reduction(ctx.node().attr_s("reduction", "none"), &red));
  // updates = indices.shape[:-1] + data.shape[last:]
  std::vector<int64_t> want(indices.shape().begin(), indices.shape().end() - 1);
  if (indices.rank() >= 1 && indices.dim(-1) <= data.rank()) {
    want.insert(want.end(), data.shape().begin() + indices.dim(-1), data.shape().end());
  }
  KILN_ENSURE(updates.shape() == want, "updates shape {} should be {}", shape_to_string(updates.shape()),
              shape_to_string(want));
  Tensor out = data.clone();
  Status st;
  KILN_RETURN_IF_ERROR(dispatch_scatter(data.dtype(), red, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* dst = out.data_as<T>();
    const T* up = updates.data_as<T>();
    int64_t slice = 0;
    st = for_each_nd_slice(data, indices, 0, &slice, [&](int64_t t, int64_t off) {
      for (int64_t j = 0; j < slice; ++j) reduce_into(red, dst[off + j], up[t * slice + j]);
    });
  }));
  KILN_RETURN_IF_ERROR(st);
  ctx.set_output(0, std::move(out));
  return Status::OK();
}

Status scatter_elements(KernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  const Tensor& updates = ctx.input(2);
  KILN_ENSURE(updates.shape() == indices.shape(), "updates shape {} differs from indices shape {}",
              shape_to_string(updates.shape()), shape_to_string(indices.shape()));
  ops::ScatterReduction red;
  KILN_RETURN_IF_ERROR(ops::parse_scatter_reduction(ctx.node().attr_s("reduction", "none"), &red));
  Tensor out = data.clone();
  Status st;
  KILN_RETURN_IF_ERROR(dispatch_scatter(data.dtype(), red, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* dst = out.data_as<T>();
    const T* up = updates.data_as<T>();
    st = for_each_element_index(data, indices, axis_attr(ctx, data.rank()),
                                [&](size_t i, int64_t off) { reduce_into(red, dst[off], up[i]); });
  }));
  KILN_RETURN_IF_ERROR(st);
  ctx.set_output(0, std::move(out));
  return Status::OK();
}

}  // namespace

void register_index_kernels(KernelRegistry& r) {
  r.add("Gather", gather);
  r.add("GatherElements", gather_elements);
  r.add("GatherND", gather_nd);
  r.add("ScatterND", scatter_nd);
  r.add("ScatterElements", scatter_elements);
  r.add("Scatter", scatter_elements);
  register_select_kernels(r);
  register_index_misc_kernels(r);
}

}  // namespace kiln::cpu
