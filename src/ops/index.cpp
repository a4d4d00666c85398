// Index ops: Gather, GatherElements, GatherND, ScatterND, ScatterElements (and the
// deprecated Scatter). TopK/ArgMax/ArgMin are in index_select.cpp, NonZero/OneHot/CumSum in
// index_misc.cpp.
#include "ops/index.h"

#include "ops/shape_util.h"

namespace kiln::ops {
namespace {

Status expect_indices(const InferContext& ctx, int i) {
  return expect_dtype(ctx, i, {DType::kInt32, DType::kInt64});
}

Status infer_gather(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(expect_indices(ctx, 1));
  const auto& data = ctx.input_type(0);
  const auto& idx = ctx.input_type(1);
  if (!data.has_rank() || !idx.has_rank()) {
    set_output(ctx, 0, data.dtype, std::nullopt);
    return Status::OK();
  }
  int64_t axis = 0;
  KILN_ENSURE(data.rank() >= 1, "Gather data must have rank >= 1");
  KILN_RETURN_IF_ERROR(normalize_axis(ctx.node.attr_i("axis", 0), data.rank(), &axis));
  std::vector<ir::Dim> out(data.shape->begin(), data.shape->begin() + axis);
  out.insert(out.end(), idx.shape->begin(), idx.shape->end());
  out.insert(out.end(), data.shape->begin() + axis + 1, data.shape->end());
  set_output(ctx, 0, data.dtype, std::move(out));
  return Status::OK();
}

Status infer_gather_elements(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(expect_indices(ctx, 1));
  const auto& data = ctx.input_type(0);
  const auto& idx = ctx.input_type(1);
  if (data.has_rank() && idx.has_rank()) {
    KILN_ENSURE(data.rank() == idx.rank(), "data {} and indices {} must have the same rank", data.to_string(),
                idx.to_string());
    int64_t axis = 0;
    KILN_RETURN_IF_ERROR(normalize_axis(ctx.node.attr_i("axis", 0), data.rank(), &axis));
  }
  set_output(ctx, 0, data.dtype, idx.shape);
  return Status::OK();
}

Status infer_gather_nd(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(expect_dtype(ctx, 1, {DType::kInt64}));
  const auto& data = ctx.input_type(0);
  const auto& idx = ctx.input_type(1);
  const int64_t b = ctx.node.attr_i("batch_dims", 0);
  if (!data.has_rank() || !idx.has_rank() || !idx.shape->back().known()) {
    set_output(ctx, 0, data.dtype, std::nullopt);
    return Status::OK();
  }
  const int64_t r = data.rank(), q = idx.rank();
  const int64_t last = idx.shape->back().value;
  KILN_ENSURE(r >= 1 && q >= 1, "GatherND data and indices must have rank >= 1");
  KILN_ENSURE(b >= 0 && b < std::min(r, q), "batch_dims {} must be less than the ranks {} and {}", b, r, q);
  KILN_ENSURE(last >= 1 && last <= r - b, "indices' last dim {} must be in [1, {}]", last, r - b);
  std::vector<ir::Dim> out(idx.shape->begin(), idx.shape->end() - 1);
  out.insert(out.end(), data.shape->begin() + b + last, data.shape->end());
  set_output(ctx, 0, data.dtype, std::move(out));
  return Status::OK();
}

Status infer_scatter_nd(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(expect_dtype(ctx, 1, {DType::kInt64}));
  ScatterReduction red;
  KILN_RETURN_IF_ERROR(parse_scatter_reduction(ctx.node.attr_s("reduction", "none"), &red));
  KILN_ENSURE(ctx.input_type(2).dtype == ctx.input_type(0).dtype, "updates must have the data's dtype");
  same_as_input(ctx, 0, 0);
  return Status::OK();
}

Status infer_scatter_elements(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(expect_indices(ctx, 1));
  ScatterReduction red;
  KILN_RETURN_IF_ERROR(parse_scatter_reduction(ctx.node.attr_s("reduction", "none"), &red));
  const auto& data = ctx.input_type(0);
  const auto& idx = ctx.input_type(1);
  KILN_ENSURE(ctx.input_type(2).dtype == data.dtype, "updates must have the data's dtype");
  if (data.has_rank() && idx.has_rank()) {
    KILN_ENSURE(data.rank() == idx.rank(), "data {} and indices {} must have the same rank", data.to_string(),
                idx.to_string());
    int64_t axis = 0;
    KILN_RETURN_IF_ERROR(normalize_axis(ctx.node.attr_i("axis", 0), data.rank(), &axis));
  }
  same_as_input(ctx, 0, 0);
  return Status::OK();
}

}  // namespace

Status parse_scatter_reduction(const std::string& s, ScatterReduction* out) {
  if (s == "none") *out = ScatterReduction::kNone;
  else if (s == "add") *out = ScatterReduction::kAdd;
  else if (s == "mul") *out = ScatterReduction::kMul;
  else if (s == "max") *out = ScatterReduction::kMax;
  else if (s == "min") *out = ScatterReduction::kMin;
  else return unsupported("scatter reduction '{}' is not supported", s);
  return Status::OK();
}

void register_gather_scatter_ops(OpRegistry& r) {
  r.add({.op_type = "Gather", .attributes = {"axis"}, .infer = infer_gather});
  r.add({.op_type = "GatherElements", .attributes = {"axis"}, .infer = infer_gather_elements});
  r.add({.op_type = "GatherND", .attributes = {"batch_dims"}, .infer = infer_gather_nd});
  r.add({.op_type = "ScatterND", .attributes = {"reduction"}, .infer = infer_scatter_nd});
  r.add({.op_type = "ScatterElements", .attributes = {"axis", "reduction"}, .infer = infer_scatter_elements});
  // Scatter (opsets 9-10) is ScatterElements under its old name.
  r.add({.op_type = "Scatter", .attributes = {"axis"}, .infer = infer_scatter_elements});
}

void register_index_ops(OpRegistry& r) {
  register_gather_scatter_ops(r);
  register_select_ops(r);
  register_index_misc_ops(r);
}

}  // namespace kiln::ops
