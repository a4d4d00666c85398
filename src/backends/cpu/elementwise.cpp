#include "backends/cpu/kernel.h"

namespace kiln::cpu {

void register_elementwise_kernels(KernelRegistry& r) {}

}  // namespace kiln::cpu
