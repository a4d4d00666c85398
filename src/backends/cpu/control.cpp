#include "backends/cpu/kernel.h"

namespace kiln::cpu {

void register_control_kernels(KernelRegistry& r) {}

}  // namespace kiln::cpu
