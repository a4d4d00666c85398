// Transformer building blocks of opsets 23/24: RMSNormalization, RotaryEmbedding, Swish.
#include "core/error.h"
#include "ops/op_schema.h"
#include "ops/shape_util.h"

namespace kiln::ops {

namespace {

const std::initializer_list<DType> kIeeeFloats = {DType::kFloat32, DType::kFloat64, DType::kFloat16,
                                                  DType::kBFloat16};

Status infer_rms_norm(InferContext& ctx) {
  KILN_ENSURE(ctx.has_input(0) && ctx.has_input(1), "RMSNormalization needs X and scale");
  KILN_RETURN_IF_ERROR(expect_dtype(ctx, 0, kIeeeFloats));
  KILN_RETURN_IF_ERROR(expect_dtype(ctx, 1, kIeeeFloats));
  const int64_t stash = ctx.node.attr_i("stash_type", 1);
  KILN_ENSURE(stash == 1 || stash == 11, "stash_type {} is not supported (float or double)", stash);
  const ir::TensorType& x = ctx.input_type(0);
  if (x.has_rank()) {
    int64_t axis = 0;
    KILN_RETURN_IF_ERROR(normalize_axis(ctx.node.attr_i("axis", -1), x.rank(), &axis));
  }
  set_output(ctx, 0, ctx.input_type(1).dtype, x.shape);
  return Status::OK();
}

Status infer_rotary_embedding(InferContext& ctx) {
  KILN_ENSURE(ctx.has_input(0) && ctx.has_input(1) && ctx.has_input(2),
              "RotaryEmbedding needs X, cos_cache and sin_cache");
  KILN_RETURN_IF_ERROR(expect_dtype(ctx, 0, {DType::kFloat32, DType::kFloat16, DType::kBFloat16}));
  KILN_RETURN_IF_ERROR(expect_dtype(ctx, 1, {ctx.input_type(0).dtype}));
  KILN_RETURN_IF_ERROR(expect_dtype(ctx, 2, {ctx.input_type(0).dtype}));
  if (ctx.has_input(3)) KILN_RETURN_IF_ERROR(expect_dtype(ctx, 3, {DType::kInt64}));
  const ir::TensorType& x = ctx.input_type(0);
  KILN_ENSURE(!x.has_rank() || x.rank() == 3 || x.rank() == 4, "X must be 3-D or 4-D, got {}", x.to_string());
  KILN_ENSURE(!x.has_rank() || x.rank() == 4 || ctx.node.attr_i("num_heads", 0) > 0,
              "num_heads is required for 3-D input");
  KILN_ENSURE(ctx.node.attr_i("rotary_embedding_dim", 0) % 2 == 0, "rotary_embedding_dim must be even");
  same_as_input(ctx, 0, 0);
  return Status::OK();
}

Status infer_swish(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(expect_dtype(ctx, 0, kIeeeFloats));
  same_as_input(ctx, 0, 0);
  return Status::OK();
}

}  // namespace

void register_extra_nn_norm_ops(OpRegistry& r) {
  r.add({.op_type = "RMSNormalization", .attributes = {"axis", "epsilon", "stash_type"}, .infer = infer_rms_norm});
  r.add({.op_type = "RotaryEmbedding",
         .attributes = {"interleaved", "num_heads", "rotary_embedding_dim"},
         .infer = infer_rotary_embedding});
  r.add({.op_type = "Swish", .attributes = {"alpha"}, .infer = infer_swish});
}

}  // namespace kiln::ops
