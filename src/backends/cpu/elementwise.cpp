// CPU kernels of the elementwise op family; each part registers its own ops.
#include "backends/cpu/elementwise_kernels.h"

namespace kiln::cpu {

void register_elementwise_kernels(KernelRegistry& r) {
  register_unary_kernels(r);
  register_activation_kernels(r);
  register_binary_kernels(r);
  register_variadic_kernels(r);
}

}  // namespace kiln::cpu
