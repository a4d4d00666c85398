// CPU kernels for shape and data-movement ops. Ops that keep the data unchanged return the
// input's storage under the shape inference computed (tensors are immutable once produced,
// so sharing is safe).
#include "backends/cpu/tensor.h"

#include <algorithm>

namespace kiln::cpu {
namespace {

Status same_data(KernelContext& ctx) {
  ctx.set_output(0, ctx.input(0).reshaped(ctx.inferred(0).concrete()));
  return Status::OK();
}

Status shape_kernel(KernelContext& ctx) {
  const std::vector<int64_t>& s = ctx.input(0).shape();
  const int64_t rank = ctx.input(0).rank();
  auto clamp_index = [&](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
  const int64_t start = clamp_index(ctx.node().attr_i("start", 0));
  const int64_t end = std::max(start, clamp_index(ctx.node().attr_i("end", rank)));
  Tensor& out = ctx.alloc_output(0);
  std::copy(s.begin() + start, s.begin() + end, out.data_as<int64_t>());
  return Status::OK();
}

Status size_kernel(KernelContext& ctx) {
  *ctx.alloc_output(0).data_as<int64_t>() = ctx.input(0).numel();
  return Status::OK();
}

}  // namespace

void register_tensor_kernels(KernelRegistry& r) {
  r.add("Identity", [](KernelContext& ctx) {
    ctx.set_output(0, ctx.input(0));
    return Status::OK();
  });
  for (const char* op : {"Reshape", "Flatten", "Squeeze", "Unsqueeze"}) r.add(op, same_data);
  r.add("Shape", shape_kernel);
  r.add("Size", size_kernel);
  register_tensor_layout_kernels(r);
  register_tensor_pad_kernels(r);
  register_tensor_generate_kernels(r);
}

}  // namespace kiln::cpu
