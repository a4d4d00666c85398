// Reduce* ops: schemas. The canonical form has `axes` as input 1 (opset 18; ReduceSum 13);
// older nodes carry it as an attribute, which canonicalize moves into the input.
#include "ops/reduce.h"

#include <algorithm>

#include "core/error.h"
#include "ops/op_schema.h"
#include "ops/shape_util.h"
#include "ops/tensor.h"

namespace kiln::ops {

Status resolve_reduce_axes(const ir::Node& node, const Tensor* axes, int rank, ReduceAxes* out) {
  std::vector<int64_t> list;
  if (axes) KILN_RETURN_IF_ERROR(tensor_to_ints(*axes, &list));
  out->noop = false;
  out->reduced.assign(rank, list.empty());
  if (list.empty()) {
    out->noop = node.attr_i("noop_with_empty_axes", 0) != 0;
    if (out->noop) out->reduced.assign(rank, false);
    return Status::OK();
  }
  for (int64_t a : list) {
    int64_t axis = 0;
    KILN_RETURN_IF_ERROR(normalize_axis(a, rank, &axis));
    if (rank > 0) out->reduced[axis] = true;
  }
  return Status::OK();
}

std::vector<int64_t> reduced_shape(const std::vector<int64_t>& in, const ReduceAxes& axes, bool keepdims) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (!axes.reduced[i]) {
      out.push_back(in[i]);
    } else if (keepdims) {
      out.push_back(1);
    }
  }
  return out;
}

namespace {

// An axes input that is statically an empty tensor means the same as no axes input.
bool axes_known_empty(const InferContext& ctx) {
  if (!ctx.has_input(1)) return true;
  const auto& t = ctx.input_type(1);
  return t.has_rank() && t.rank() == 1 && (*t.shape)[0].known() && (*t.shape)[0].value == 0;
}

Status infer_reduce(InferContext& ctx, bool allow_bool) {
  const auto& x = ctx.input_type(0);
  const DType dt = x.dtype;
  const bool numeric = dtype_is_integer(dt) || (dtype_is_float(dt) && dt != DType::kFloat8E4M3FN &&
                                                dt != DType::kFloat8E5M2);
  if (!numeric && !(allow_bool && dt == DType::kBool)) {
    return unsupported("{} does not accept dtype {}", ctx.node.op_type, dtype_name(dt));
  }
  const bool keepdims = ctx.node.attr_i("keepdims", 1) != 0;
  if (!x.has_rank()) {
    set_output(ctx, 0, dt, std::nullopt);
    return Status::OK();
  }
  const int rank = x.rank();
  const Tensor* axes_value = axes_known_empty(ctx) ? nullptr : ctx.input_value(1);
  if (!axes_known_empty(ctx) && !axes_value) {
    // Axes are computed at run time: with keepdims the rank is still known.
    if (keepdims) {
      set_output(ctx, 0, dt, std::vector<ir::Dim>(rank, ir::Dim()));
    } else {
      set_output(ctx, 0, dt, std::nullopt);
    }
    return Status::OK();
  }
  ReduceAxes axes;
  KILN_RETURN_IF_ERROR(resolve_reduce_axes(ctx.node, axes_value, rank, &axes));
  std::vector<ir::Dim> out;
  for (int i = 0; i < rank; ++i) {
    if (!axes.reduced[i]) {
      out.push_back((*x.shape)[i]);
    } else if (keepdims) {
      out.push_back(ir::Dim(1));
    }
  }
  set_output(ctx, 0, dt, std::move(out));
  return Status::OK();
}

void add_reduce(OpRegistry& r, const std::string& op, int axes_input_since, bool allow_bool) {
  r.add({.op_type = op,
         .attributes = {"axes", "keepdims", "noop_with_empty_axes"},
         .canonicalize =
             [axes_input_since](ir::Node& node, ir::Graph& g) {
               if (node.has_attr("axes")) {
                 if (node.opset >= axes_input_since) {
                   return invalid_argument("axes is an input, not an attribute, since opset {}",
                                           axes_input_since);
                 }
                 attribute_to_input(node, g, "axes", 1, ints_to_tensor(node.attr_ints("axes")));
               }
               return Status::OK();
             },
         .infer = [allow_bool](InferContext& ctx) { return infer_reduce(ctx, allow_bool); }});
}

}  // namespace

void register_reduce_ops(OpRegistry& r) {
  add_reduce(r, "ReduceSum", 13, false);
  for (const char* op : {"ReduceMean", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp",
                         "ReduceSumSquare"}) {
    add_reduce(r, op, 18, false);
  }
  add_reduce(r, "ReduceMax", 18, true);  // bool since opset 20
  add_reduce(r, "ReduceMin", 18, true);
}

}  // namespace kiln::ops
