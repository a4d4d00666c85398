// CPU pooling kernels (MaxPool, AveragePool, LpPool and their Global forms).
#include "backends/cpu/conv_pool.h"

namespace kiln::cpu {

void register_pool_kernels(KernelRegistry& r) {}

}  // namespace kiln::cpu
