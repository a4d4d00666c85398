#include "backends/cpu/kernel.h"

namespace kiln::cpu {

void register_index_kernels(KernelRegistry& r) {}

}  // namespace kiln::cpu
