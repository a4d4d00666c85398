#include "backends/cpu/kernel.h"

namespace kiln::cpu {

void register_conv_pool_kernels(KernelRegistry& r) {}

}  // namespace kiln::cpu
