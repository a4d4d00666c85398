#include "backends/cpu/kernel.h"

namespace kiln::cpu {

void register_matmul_kernels(KernelRegistry& r) {}

}  // namespace kiln::cpu
