// CPU kernels for shape and data-movement ops.
#include "backends/cpu/kernel.h"

namespace kiln::cpu {

void register_tensor_kernels(KernelRegistry& r) {
  r.add("Identity", [](KernelContext& ctx) {
    ctx.set_output(0, ctx.input(0));  // tensors are immutable once produced, so sharing is safe
    return Status::OK();
  });
}

}  // namespace kiln::cpu
