// CPU kernels for RoiAlign and MaxUnpool.
#include "backends/cpu/kernel.h"
#include "core/dispatch.h"
#include "core/error.h"

namespace kiln::cpu {

void register_extra_vision_pool_kernels(KernelRegistry&) {}

}  // namespace kiln::cpu
