// Vision ops (LRN, EyeLike, NonMaxSuppression, RoiAlign, MaxUnpool, Compress): arithmetic
// shared by schemas and kernels.
#pragma once
#include "ops/op_schema.h"

namespace kiln::ops {

// RoiAlign and MaxUnpool schemas (extra_vision_pool.cpp).
void register_extra_vision_pool_ops(OpRegistry& r);

}  // namespace kiln::ops
