#include "backends/cpu/kernel.h"

namespace kiln::cpu {

void register_rnn_kernels(KernelRegistry& r) {}

}  // namespace kiln::cpu
