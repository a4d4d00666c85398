#include "backends/cpu/kernel.h"

namespace kiln::cpu {

void register_reduce_kernels(KernelRegistry& r) {}

}  // namespace kiln::cpu
