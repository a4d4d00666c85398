#include "ops/op_schema.h"
namespace kiln::ops {
void register_extra_nn_norm_ops(OpRegistry& r) { (void)r; }
}  // namespace kiln::ops
