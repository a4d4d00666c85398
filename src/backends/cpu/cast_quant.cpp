#include "backends/cpu/kernel.h"

namespace kiln::cpu {

void register_cast_quant_kernels(KernelRegistry& r) {}

}  // namespace kiln::cpu
