// Schemas of the ops that change only a tensor's shape (Reshape, Flatten, Squeeze, Unsqueeze)
// or read it (Shape, Size). Shape and Size publish their value when the dims they read are
// static, so shape arithmetic (Shape -> Gather -> Concat -> Reshape) resolves at import time.
#include <algorithm>

#include "core/error.h"
#include "ops/shape_util.h"
#include "ops/tensor.h"

namespace kiln::ops {
namespace {

// Removes pairs of identical symbolic dims from both lists: N*3*4 / (N*12) is known.
void cancel_symbols(std::vector<ir::Dim>* a, std::vector<ir::Dim>* b) {
  for (auto it = a->begin(); it != a->end();) {
    auto match =
        std::find_if(b->begin(), b->end(), [&](const ir::Dim& d) { return !d.symbol.empty() && d == *it; });
    if (!it->symbol.empty() && match != b->end()) {
      b->erase(match);
      it = a->erase(it);
    } else {
      ++it;
    }
  }
}

// The dim Reshape's -1 stands for: input elements / the other output dims' elements.
Status infer_minus_one(const std::optional<std::vector<ir::Dim>>& in, const std::vector<ir::Dim>& out,
                       ir::Dim* result) {
  *result = ir::Dim();
  if (!in) return Status::OK();
  int64_t in_known = 1, out_known = 1;
  std::vector<ir::Dim> in_unknown, out_unknown;
  for (const ir::Dim& d : *in) d.known() ? void(in_known *= d.value) : in_unknown.push_back(d);
  for (const ir::Dim& d : out) d.known() ? void(out_known *= d.value) : out_unknown.push_back(d);
  cancel_symbols(&in_unknown, &out_unknown);
  if (!out_unknown.empty()) return Status::OK();
  if (out_known == 0) {
    KILN_ENSURE(in_known == 0 || !in_unknown.empty(), "cannot infer -1 in a reshape with a 0 dim");
    return Status::OK();
  }
  if (in_unknown.empty()) {
    KILN_ENSURE(in_known % out_known == 0, "cannot reshape {} elements into groups of {}", in_known,
                out_known);
    *result = in_known / out_known;
  } else if (in_unknown.size() == 1 && in_known == out_known) {
    *result = in_unknown[0];
  }
  return Status::OK();
}

Status infer_reshape(InferContext& ctx) {
  const ir::TensorType& in = ctx.input_type(0);
  std::vector<int64_t> shape;
  if (!input_ints(ctx, 1, &shape)) {
    const int64_t n = input_length(ctx, 1);
    set_output(ctx, 0, in.dtype, n >= 0 ? std::optional(unknown_dims(static_cast<int>(n))) : std::nullopt);
    return Status::OK();
  }
  const bool allowzero = ctx.node.attr_i("allowzero", 0) != 0;
  std::vector<ir::Dim> out;
  int minus_one = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    const int64_t s = shape[i];
    if (s == 0 && !allowzero) {
      if (!in.has_rank()) {
        out.emplace_back();
        continue;
      }
      KILN_ENSURE(static_cast<int>(i) < in.rank(), "shape[{}] is 0 but the input has rank {}", i, in.rank());
      out.push_back((*in.shape)[i]);
    } else if (s == -1) {
      KILN_ENSURE(minus_one < 0, "shape {} has more than one -1", shape_to_string(shape));
      minus_one = static_cast<int>(i);
      out.emplace_back();
    } else {
      KILN_ENSURE(s >= 0, "shape {} has an invalid dim {}", shape_to_string(shape), s);
      out.push_back(s);
    }
  }
  if (minus_one >= 0) {
    KILN_ENSURE(!(allowzero && std::count(shape.begin(), shape.end(), 0) > 0),
                "shape {} has both -1 and 0 with allowzero", shape_to_string(shape));
    std::vector<ir::Dim> others = out;
    others.erase(others.begin() + minus_one);
    KILN_RETURN_IF_ERROR(infer_minus_one(in.shape, others, &out[minus_one]));
  }
  const ir::TensorType result(in.dtype, out);
  if (in.is_concrete() && result.is_concrete()) {
    KILN_ENSURE(Tensor::numel_of(in.concrete()) == Tensor::numel_of(result.concrete()),
                "cannot reshape {} into {}", in.to_string(), result.to_string());
  }
  set_output(ctx, 0, in.dtype, out);
  return Status::OK();
}

Status infer_flatten(InferContext& ctx) {
  const ir::TensorType& in = ctx.input_type(0);
  if (!in.has_rank()) {
    set_output(ctx, 0, in.dtype, unknown_dims(2));
    return Status::OK();
  }
  int64_t axis = ctx.node.attr_i("axis", 1);
  const int rank = in.rank();
  KILN_ENSURE(axis >= -rank && axis <= rank, "axis {} is out of range for rank {}", axis, rank);
  if (axis < 0) axis += rank;
  const auto& s = *in.shape;
  set_output(ctx, 0, in.dtype,
             std::vector<ir::Dim>{dim_product({s.begin(), s.begin() + axis}),
                                  dim_product({s.begin() + axis, s.end()})});
  return Status::OK();
}

Status infer_squeeze(InferContext& ctx) {
  const ir::TensorType& in = ctx.input_type(0);
  if (!in.has_rank()) {
    set_output(ctx, 0, in.dtype, std::nullopt);
    return Status::OK();
  }
  const auto& s = *in.shape;
  std::vector<int64_t> axes;
  if (ctx.has_input(1) && !input_ints(ctx, 1, &axes)) {
    const int64_t n = input_length(ctx, 1);
    set_output(ctx, 0, in.dtype,
               n >= 0 ? std::optional(unknown_dims(in.rank() - static_cast<int>(n))) : std::nullopt);
    return Status::OK();
  }
  std::vector<bool> drop(s.size(), false);
  if (!axes.empty()) {  // an empty axes tensor means "all ones", as no axes does
    std::vector<int64_t> norm;
    KILN_RETURN_IF_ERROR(normalize_axes(axes, in.rank(), &norm));
    for (int64_t a : norm) {
      KILN_ENSURE(!s[a].known() || s[a].value == 1, "cannot squeeze axis {} of size {}", a, s[a].value);
      drop[a] = true;
    }
  } else {
    // Without axes every 1 goes; an unknown dim might be 1, so the rank is unknown.
    for (size_t i = 0; i < s.size(); ++i) {
      if (!s[i].known()) {
        set_output(ctx, 0, in.dtype, std::nullopt);
        return Status::OK();
      }
      drop[i] = s[i].value == 1;
    }
  }
  std::vector<ir::Dim> out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (!drop[i]) out.push_back(s[i]);
  }
  set_output(ctx, 0, in.dtype, out);
  return Status::OK();
}

Status infer_unsqueeze(InferContext& ctx) {
  const ir::TensorType& in = ctx.input_type(0);
  KILN_ENSURE(ctx.has_input(1), "Unsqueeze needs axes");
  std::vector<int64_t> axes;
  if (!in.has_rank() || !input_ints(ctx, 1, &axes)) {
    const int64_t n = input_length(ctx, 1);
    const bool rank_known = in.has_rank() && n >= 0;
    set_output(ctx, 0, in.dtype,
               rank_known ? std::optional(unknown_dims(in.rank() + static_cast<int>(n))) : std::nullopt);
    return Status::OK();
  }
  const int out_rank = in.rank() + static_cast<int>(axes.size());
  std::vector<int64_t> norm;
  KILN_RETURN_IF_ERROR(normalize_axes(axes, out_rank, &norm));
  std::vector<bool> is_new(out_rank, false);
  for (int64_t a : norm) is_new[a] = true;
  std::vector<ir::Dim> out;
  size_t next = 0;
  for (int i = 0; i < out_rank; ++i) out.push_back(is_new[i] ? ir::Dim(1) : (*in.shape)[next++]);
  set_output(ctx, 0, in.dtype, out);
  return Status::OK();
}

Status infer_shape(InferContext& ctx) {
  const ir::TensorType& in = ctx.input_type(0);
  if (!in.has_rank()) {
    set_output(ctx, 0, DType::kInt64, std::vector<ir::Dim>{ir::Dim()});
    return Status::OK();
  }
  const int64_t rank = in.rank();
  auto clamp_index = [&](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
  const int64_t start = clamp_index(ctx.node.attr_i("start", 0));
  const int64_t end = clamp_index(ctx.node.attr_i("end", rank));
  const int64_t n = std::max<int64_t>(end - start, 0);
  set_output(ctx, 0, DType::kInt64, std::vector<ir::Dim>{n});
  std::vector<int64_t> dims;
  for (int64_t i = start; i < start + n; ++i) {
    if (!(*in.shape)[i].known()) return Status::OK();
    dims.push_back((*in.shape)[i].value);
  }
  ctx.output_values[0] = ints_to_tensor(dims);
  return Status::OK();
}

Status infer_size(InferContext& ctx) {
  const ir::TensorType& in = ctx.input_type(0);
  set_output(ctx, 0, DType::kInt64, std::vector<ir::Dim>{});
  if (in.is_concrete()) ctx.output_values[0] = ints_to_tensor({Tensor::numel_of(in.concrete())}).reshaped({});
  return Status::OK();
}

// Moves Squeeze/Unsqueeze's pre-opset-13 axes attribute into the axes input.
Status canonicalize_axes_attr(ir::Node& node, ir::Graph& g) {
  if (node.has_attr("axes")) attribute_to_input(node, g, "axes", 1, ints_to_tensor(node.attr_ints("axes")));
  return Status::OK();
}

}  // namespace

void register_tensor_reshape_ops(OpRegistry& r) {
  r.add({.op_type = "Reshape",
         .attributes = {"allowzero", "shape", "consumed_inputs"},
         .canonicalize =
             [](ir::Node& node, ir::Graph& g) {
               // Opset < 5 gives the shape as an attribute.
               if (node.has_attr("shape"))
                 attribute_to_input(node, g, "shape", 1, ints_to_tensor(node.attr_ints("shape")));
               node.attrs.erase("consumed_inputs");
               return Status::OK();
             },
         .infer = infer_reshape,
         .cost = view_cost});
  r.add({.op_type = "Flatten", .attributes = {"axis"}, .infer = infer_flatten, .cost = view_cost});
  r.add({.op_type = "Squeeze",
         .attributes = {"axes"},
         .canonicalize = canonicalize_axes_attr,
         .infer = infer_squeeze,
         .cost = view_cost});
  r.add({.op_type = "Unsqueeze",
         .attributes = {"axes"},
         .canonicalize = canonicalize_axes_attr,
         .infer = infer_unsqueeze,
         .cost = view_cost});
  r.add({.op_type = "Shape", .attributes = {"start", "end"}, .infer = infer_shape, .cost = view_cost});
  r.add({.op_type = "Size", .attributes = {}, .infer = infer_size, .cost = view_cost});
}

}  // namespace kiln::ops
