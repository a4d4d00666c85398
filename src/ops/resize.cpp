#include "ops/op_schema.h"
#include "ops/shape_util.h"

namespace kiln::ops {

void register_resize_ops(OpRegistry& r) {}

}  // namespace kiln::ops
