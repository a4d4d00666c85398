// CPU kernels for convolution and pooling; the family spans conv_pool_*.cpp.
#include "backends/cpu/conv_pool.h"

namespace kiln::cpu {

void register_conv_pool_kernels(KernelRegistry& r) {
  register_conv_kernels(r);
  register_conv_quant_kernels(r);
  register_pool_kernels(r);
}

}  // namespace kiln::cpu
