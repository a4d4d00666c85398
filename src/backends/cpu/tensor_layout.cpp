// CPU kernels that rearrange, join, cut or repeat elements: Transpose, Concat, Split, Slice,
// Expand, Tile. All work on bytes, so every dtype shares one code path.
#include <cstring>
#include <numeric>

#include "backends/cpu/tensor.h"
#include "backends/cpu/tensor_copy.h"
#include "core/error.h"
#include "ops/shape_util.h"
#include "ops/tensor.h"

namespace kiln::cpu {
namespace {

Status transpose_kernel(KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  std::vector<int64_t> perm = ctx.node().attr_ints("perm");
  if (!ctx.node().has_attr("perm")) {
    perm.resize(in.rank());
    std::iota(perm.rbegin(), perm.rend(), 0);
  }
  for (int64_t& p : perm) p = p < 0 ? p + in.rank() : p;
  Tensor& out = ctx.alloc_output(0);
  gather_axes(in, transpose_offsets(in.shape(), perm), nullptr, &out);
  return Status::OK();
}

// Bytes of one index along `axis` (everything after it) and the count of blocks before it.
void split_at_axis(const std::vector<int64_t>& shape, int64_t axis, size_t elem_size, int64_t* outer,
                   size_t* inner_bytes) {
  *outer = Tensor::numel_of({shape.begin(), shape.begin() + axis});
  *inner_bytes = static_cast<size_t>(Tensor::numel_of({shape.begin() + axis + 1, shape.end()})) * elem_size;
}

Status concat_kernel(KernelContext& ctx) {
  Tensor& out = ctx.alloc_output(0);
  int64_t axis = 0;
  KILN_RETURN_IF_ERROR(
      ops::normalize_axis(ctx.node().attr_i("axis", ctx.node().opset < 4 ? 1 : 0), out.rank(), &axis));
  int64_t outer = 0;
  size_t inner = 0;
  split_at_axis(out.shape(), axis, dtype_size(out.dtype()), &outer, &inner);
  auto* dst = static_cast<std::byte*>(out.data());
  // Each outer block of the output is the inputs' blocks one after another.
  for (int64_t o = 0; o < outer; ++o) {
    for (int i = 0; i < ctx.num_inputs(); ++i) {
      const Tensor& in = ctx.input(i);
      const size_t n = static_cast<size_t>(in.dim(static_cast<int>(axis))) * inner;
      if (n == 0) continue;
      std::memcpy(dst, static_cast<const std::byte*>(in.data()) + o * n, n);
      dst += n;
    }
  }
  return Status::OK();
}

Status split_kernel(KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  int64_t axis = 0;
  KILN_RETURN_IF_ERROR(ops::normalize_axis(ctx.node().attr_i("axis", 0), in.rank(), &axis));
  int64_t outer = 0;
  size_t inner = 0;
  split_at_axis(in.shape(), axis, dtype_size(in.dtype()), &outer, &inner);
  const size_t in_block = static_cast<size_t>(in.dim(static_cast<int>(axis))) * inner;
  size_t offset = 0;  // bytes into each input block where output i's part starts
  for (int i = 0; i < ctx.num_outputs(); ++i) {
    const size_t n = static_cast<size_t>(ctx.inferred(i).concrete()[axis]) * inner;
    if (ctx.has_output(i)) {
      Tensor& out = ctx.alloc_output(i);
      auto* dst = static_cast<std::byte*>(out.data());
      const auto* src = static_cast<const std::byte*>(in.data()) + offset;
      for (int64_t o = 0; o < outer && n > 0; ++o) std::memcpy(dst + o * n, src + o * in_block, n);
    }
    offset += n;
  }
  return Status::OK();
}

// Reads optional integer input i, or leaves `out` empty.
Status optional_ints(const KernelContext& ctx, int i, std::vector<int64_t>* out) {
  out->clear();
  return ctx.has_input(i) ? ops::tensor_to_ints(ctx.input(i), out) : Status::OK();
}

Status slice_kernel(KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  std::vector<int64_t> starts, ends, axes, steps;
  KILN_RETURN_IF_ERROR(ops::tensor_to_ints(ctx.input(1), &starts));
  KILN_RETURN_IF_ERROR(ops::tensor_to_ints(ctx.input(2), &ends));
  KILN_RETURN_IF_ERROR(optional_ints(ctx, 3, &axes));
  KILN_RETURN_IF_ERROR(optional_ints(ctx, 4, &steps));
  std::vector<ops::SliceSpec> specs;
  KILN_RETURN_IF_ERROR(ops::resolve_slice(in.rank(), starts, ends, axes, steps, &specs));
  AxisOffsets off = identity_offsets(in.shape());
  const std::vector<int64_t> strides = strides_of(in.shape());
  for (const ops::SliceSpec& s : specs) {
    const ops::SliceRange r = ops::slice_range(in.dim(s.axis), s.start, s.end, s.step);
    off[s.axis].clear();
    for (int64_t i = 0; i < r.size; ++i) off[s.axis].push_back((r.start + i * r.step) * strides[s.axis]);
  }
  Tensor& out = ctx.alloc_output(0);
  gather_axes(in, off, nullptr, &out);
  return Status::OK();
}

// Expand and Tile: output axis k (right-aligned with the input's axes) reads index
// source(i, input dim) of the input.
template <class Source>
Status repeat_kernel(KernelContext& ctx, Source source) {
  const Tensor& in = ctx.input(0);
  Tensor& out = ctx.alloc_output(0);
  const std::vector<int64_t> strides = strides_of(in.shape());
  const int lead = out.rank() - in.rank();
  AxisOffsets off(out.rank());
  for (int k = 0; k < out.rank(); ++k) {
    const int64_t d = k < lead ? 1 : in.dim(k - lead);
    const int64_t stride = k < lead ? 0 : strides[k - lead];
    for (int64_t i = 0; i < out.dim(k); ++i) off[k].push_back(source(i, d) * stride);
  }
  gather_axes(in, off, nullptr, &out);
  return Status::OK();
}

}  // namespace

void register_tensor_layout_kernels(KernelRegistry& r) {
  r.add("Transpose", transpose_kernel);
  r.add("Concat", concat_kernel);
  r.add("Split", split_kernel);
  r.add("Slice", slice_kernel);
  r.add("Expand", [](KernelContext& ctx) {
    return repeat_kernel(ctx, [](int64_t i, int64_t d) { return d == 1 ? 0 : i; });
  });
  r.add("Tile",
        [](KernelContext& ctx) { return repeat_kernel(ctx, [](int64_t i, int64_t d) { return i % d; }); });
}

}  // namespace kiln::cpu
