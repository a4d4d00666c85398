// CPU kernel of kiln.ChannelsLastPool (src/ops/layout_ops.cpp): the reference is the plain
// pool kernel between two transposes. Slower than a native channels-last pool, but right by
// construction; backends that prefer channels-last implement the op natively.
#include "core/error.h"
#include "backends/cpu/kernel.h"
#include "backends/cpu/tensor_copy.h"
#include "ops/layout_ops.h"

namespace kiln::cpu {
namespace {

Tensor transposed(const Tensor& t, const std::vector<int64_t>& perm) {
  std::vector<int64_t> shape;
  for (int64_t p : perm) shape.push_back(t.dim(static_cast<int>(p)));
  Tensor out = Tensor::uninitialized(t.dtype(), shape);
  gather_axes(t, transpose_offsets(t.shape(), perm), nullptr, &out);
  return out;
}

Status channels_last_pool_kernel(KernelContext& ctx) {
  const ir::Node plain = ops::channels_first_pool_node(ctx.node());
  const Kernel* pool = KernelRegistry::instance().find("", plain.op_type);
  KILN_ASSERT(pool != nullptr, "no CPU kernel for {}", plain.op_type);
  const Tensor& x = ctx.input(0);
  const int rank = x.rank();
  const Tensor x_first = transposed(x, ops::to_channels_first_perm(rank));
  std::vector<ir::TensorType> inferred{ops::permute_type(ctx.inferred(0), ops::to_channels_first_perm(rank))};
  KernelContext inner(plain, {&x_first}, std::move(inferred), {});
  KILN_RETURN_IF_ERROR((*pool)(inner));
  ctx.set_output(0, transposed(inner.outputs()[0], ops::to_channels_last_perm(rank)));
  return Status::OK();
}

}  // namespace

void register_layout_kernels(KernelRegistry& r) { r.add("ChannelsLastPool", channels_last_pool_kernel, "kiln"); }

}  // namespace kiln::cpu
