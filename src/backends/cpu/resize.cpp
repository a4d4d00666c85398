#include "backends/cpu/kernel.h"

namespace kiln::cpu {

void register_resize_kernels(KernelRegistry& r) {}

}  // namespace kiln::cpu
