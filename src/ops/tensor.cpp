// Shape and data-movement ops: schemas (attributes, canonical forms, shape inference).
#include "ops/op_schema.h"
#include "ops/shape_util.h"

namespace kiln::ops {

void register_tensor_ops(OpRegistry& r) {
  r.add({.op_type = "Identity",
         .attributes = {},
         .infer = [](InferContext& ctx) {
           same_as_input(ctx, 0, 0);
           if (ctx.input_value(0)) ctx.output_values[0] = *ctx.input_value(0);
           return Status::OK();
         }});
}

}  // namespace kiln::ops
