// RoiAlign and MaxUnpool schemas.
#include "core/error.h"
#include "ops/extra_vision.h"
#include "ops/shape_util.h"

namespace kiln::ops {

void register_extra_vision_pool_ops(OpRegistry&) {}

}  // namespace kiln::ops
