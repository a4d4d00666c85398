#include "backends/cpu/kernel.h"

namespace kiln::cpu {

void register_norm_kernels(KernelRegistry& r) {}

}  // namespace kiln::cpu
