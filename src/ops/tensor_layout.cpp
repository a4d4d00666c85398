// Schemas of the ops that rearrange, join, cut or repeat elements: Transpose, Concat, Split,
// Slice, Expand, Tile.
#include <algorithm>
#include <limits>
#include <numeric>

#include "core/error.h"
#include "ops/shape_util.h"
#include "ops/tensor.h"

namespace kiln::ops {
namespace {

Status infer_transpose(InferContext& ctx) {
  const ir::TensorType& in = ctx.input_type(0);
  std::vector<int64_t> perm = ctx.node.attr_ints("perm");
  if (!in.has_rank()) {
    set_output(ctx, 0, in.dtype,
               perm.empty() ? std::nullopt : std::optional(unknown_dims(static_cast<int>(perm.size()))));
    return Status::OK();
  }
  const int rank = in.rank();
  if (!ctx.node.has_attr("perm")) {
    perm.resize(rank);
    std::iota(perm.rbegin(), perm.rend(), 0);  // default: reverse the dims
  }
  KILN_ENSURE(static_cast<int>(perm.size()) == rank, "perm has {} entries for a rank-{} input", perm.size(),
              rank);
  std::vector<int64_t> norm;
  KILN_RETURN_IF_ERROR(normalize_axes(perm, rank, &norm));
  std::vector<ir::Dim> out;
  for (int64_t p : norm) out.push_back((*in.shape)[p]);
  set_output(ctx, 0, in.dtype, out);
  return Status::OK();
}

Status infer_concat(InferContext& ctx) {
  KILN_ENSURE(ctx.num_inputs() >= 1 && ctx.has_input(0), "Concat needs at least one input");
  const DType dtype = ctx.input_type(0).dtype;
  int rank = -1;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    KILN_ENSURE(ctx.has_input(i), "Concat input {} is missing", i);
    KILN_ENSURE(ctx.input_type(i).dtype == dtype, "Concat inputs have different dtypes ({} and {})",
                dtype_name(dtype), dtype_name(ctx.input_type(i).dtype));
    if (!ctx.input_type(i).has_rank()) continue;
    KILN_ENSURE(rank < 0 || ctx.input_type(i).rank() == rank, "Concat inputs have different ranks");
    rank = ctx.input_type(i).rank();
  }
  if (rank < 0) {
    set_output(ctx, 0, dtype, std::nullopt);
    return Status::OK();
  }
  int64_t axis = 0;
  KILN_RETURN_IF_ERROR(normalize_axis(ctx.node.attr_i("axis", ctx.node.opset < 4 ? 1 : 0), rank, &axis));
  KILN_ENSURE(axis < rank, "Concat axis {} is out of range for rank {}", axis, rank);
  std::vector<ir::Dim> out = unknown_dims(rank);
  int64_t axis_sum = 0;
  bool axis_known = true;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    const ir::TensorType& t = ctx.input_type(i);
    if (!t.has_rank()) {
      axis_known = false;
      continue;
    }
    for (int d = 0; d < rank; ++d) {
      const ir::Dim& dim = (*t.shape)[d];
      if (d == axis) {
        dim.known() ? void(axis_sum += dim.value) : void(axis_known = false);
      } else if (dim.known() && out[d].known()) {
        KILN_ENSURE(dim.value == out[d].value, "Concat inputs disagree on dim {} ({} vs {})", d, out[d].value,
                    dim.value);
      } else if (!out[d].known() && (dim.known() || out[d].symbol.empty())) {
        out[d] = dim;
      }
    }
  }
  out[axis] =
      axis_known ? ir::Dim(axis_sum) : (ctx.num_inputs() == 1 ? (*ctx.input_type(0).shape)[axis] : ir::Dim());
  set_output(ctx, 0, dtype, out);
  return Status::OK();
}

// Split sizes along the axis of `dim` elements into `n` outputs; empty when unknown.
Status split_sizes(const InferContext& ctx, const ir::Dim& dim, int n, std::vector<int64_t>* sizes) {
  sizes->clear();
  if (ctx.has_input(1)) {
    if (!input_ints(ctx, 1, sizes)) return Status::OK();
    KILN_ENSURE(static_cast<int>(sizes->size()) == n, "split has {} entries for {} outputs", sizes->size(),
                n);
    for (int64_t s : *sizes) KILN_ENSURE(s >= 0, "split sizes must not be negative");
    const int64_t total = std::accumulate(sizes->begin(), sizes->end(), int64_t{0});
    KILN_ENSURE(!dim.known() || total == dim.value, "split sizes sum to {} but the axis has {}", total,
                dim.value);
    return Status::OK();
  }
  if (!dim.known()) return Status::OK();
  if (ctx.node.has_attr("num_outputs")) {
    // Opset 18: equal chunks of ceil(dim / n); the last one takes what is left.
    KILN_ENSURE(ctx.node.attr_i("num_outputs", 0) == n, "num_outputs is {} but the node has {} outputs",
                ctx.node.attr_i("num_outputs", 0), n);
    const int64_t chunk = (dim.value + n - 1) / n;
    KILN_ENSURE(chunk * (n - 1) <= dim.value, "cannot split {} elements into {} outputs", dim.value, n);
    sizes->assign(n, chunk);
    sizes->back() = dim.value - chunk * (n - 1);
  } else {
    KILN_ENSURE(dim.value % n == 0, "cannot split {} elements evenly into {} outputs", dim.value, n);
    sizes->assign(n, dim.value / n);
  }
  return Status::OK();
}

Status infer_split(InferContext& ctx) {
  const ir::TensorType& in = ctx.input_type(0);
  const int n = ctx.num_outputs();
  KILN_ENSURE(n >= 1, "Split needs at least one output");
  if (!in.has_rank()) {
    for (int i = 0; i < n; ++i) set_output(ctx, i, in.dtype, std::nullopt);
    return Status::OK();
  }
  int64_t axis = 0;
  KILN_RETURN_IF_ERROR(normalize_axis(ctx.node.attr_i("axis", 0), in.rank(), &axis));
  KILN_ENSURE(axis < in.rank(), "Split axis is out of range for rank {}", in.rank());
  std::vector<int64_t> sizes;
  KILN_RETURN_IF_ERROR(split_sizes(ctx, (*in.shape)[axis], n, &sizes));
  for (int i = 0; i < n; ++i) {
    std::vector<ir::Dim> out = *in.shape;
    out[axis] = sizes.empty() ? (n == 1 ? out[axis] : ir::Dim()) : ir::Dim(sizes[i]);
    set_output(ctx, i, in.dtype, out);
  }
  return Status::OK();
}

// Reads Slice's optional input i (axes, steps): true when absent or known.
bool optional_ints(const InferContext& ctx, int i, std::vector<int64_t>* out) {
  out->clear();
  return !ctx.has_input(i) || input_ints(ctx, i, out);
}

// The axes a Slice with unknown bounds may change: its axes when known, else (no axes input)
// the first len(starts) axes, else all of them.
std::vector<int64_t> possibly_sliced_axes(const InferContext& ctx, int rank, bool axes_known,
                                          const std::vector<int64_t>& axes) {
  std::vector<int64_t> result;
  if (axes_known && !axes.empty() && normalize_axes(axes, rank, &result).ok()) return result;
  const int64_t n = axes_known && axes.empty() ? input_length(ctx, 1) : -1;
  for (int64_t a = 0; a < (n >= 0 ? std::min<int64_t>(n, rank) : rank); ++a) result.push_back(a);
  return result;
}

Status infer_slice(InferContext& ctx) {
  const ir::TensorType& in = ctx.input_type(0);
  if (!in.has_rank()) {
    set_output(ctx, 0, in.dtype, std::nullopt);
    return Status::OK();
  }
  KILN_ENSURE(ctx.has_input(1) && ctx.has_input(2), "Slice needs starts and ends");
  std::vector<int64_t> starts, ends, axes, steps;
  const bool axes_known = optional_ints(ctx, 3, &axes);
  std::vector<ir::Dim> out = *in.shape;
  if (!input_ints(ctx, 1, &starts) || !input_ints(ctx, 2, &ends) || !optional_ints(ctx, 4, &steps) ||
      !axes_known) {
    for (int64_t a : possibly_sliced_axes(ctx, in.rank(), axes_known, axes)) out[a] = ir::Dim();
    set_output(ctx, 0, in.dtype, out);
    return Status::OK();
  }
  std::vector<SliceSpec> specs;
  KILN_RETURN_IF_ERROR(resolve_slice(in.rank(), starts, ends, axes, steps, &specs));
  for (const SliceSpec& s : specs) {
    ir::Dim& d = out[s.axis];
    if (d.known()) {
      d = slice_range(d.value, s.start, s.end, s.step).size;
    } else if (!(s.start == 0 && s.step == 1 && s.end >= std::numeric_limits<int32_t>::max())) {
      d = ir::Dim();  // a full slice of a symbolic dim keeps it
    }
  }
  set_output(ctx, 0, in.dtype, out);
  return Status::OK();
}

Status canonicalize_slice(ir::Node& node, ir::Graph& g) {
  // Opset < 10 gives starts/ends/axes as attributes (and has no steps).
  if (!node.has_attr("starts") && !node.has_attr("ends")) return Status::OK();
  KILN_ENSURE(node.has_attr("starts") && node.has_attr("ends"), "Slice needs both starts and ends");
  if (node.has_attr("axes")) attribute_to_input(node, g, "axes", 3, ints_to_tensor(node.attr_ints("axes")));
  attribute_to_input(node, g, "ends", 2, ints_to_tensor(node.attr_ints("ends")));
  attribute_to_input(node, g, "starts", 1, ints_to_tensor(node.attr_ints("starts")));
  return Status::OK();
}

Status infer_expand(InferContext& ctx) {
  const ir::TensorType& in = ctx.input_type(0);
  std::vector<int64_t> shape;
  if (!in.has_rank()) {
    set_output(ctx, 0, in.dtype, std::nullopt);
    return Status::OK();
  }
  if (!input_ints(ctx, 1, &shape)) {
    // An unknown target dim is 1 or the input's dim, so a known input dim other than 1 stays.
    const int64_t n = input_length(ctx, 1);
    if (n < 0) {
      set_output(ctx, 0, in.dtype, std::nullopt);
      return Status::OK();
    }
    const int rank = std::max(in.rank(), static_cast<int>(n));
    std::vector<ir::Dim> out = unknown_dims(rank);
    for (int i = 0; i < in.rank(); ++i) {
      const ir::Dim& d = (*in.shape)[i];
      if (d.known() && d.value != 1) out[rank - in.rank() + i] = d;
    }
    set_output(ctx, 0, in.dtype, out);
    return Status::OK();
  }
  std::vector<ir::Dim> target(shape.begin(), shape.end());
  for (const ir::Dim& d : target)
    KILN_ENSURE(d.value >= 0, "Expand shape {} has a negative dim", shape_to_string(shape));
  const ir::TensorType target_type(in.dtype, target);
  std::vector<ir::Dim> out;
  KILN_RETURN_IF_ERROR(broadcast_types({&in, &target_type}, &out));
  set_output(ctx, 0, in.dtype, out);
  return Status::OK();
}

Status infer_tile(InferContext& ctx) {
  const ir::TensorType& in = ctx.input_type(0);
  std::vector<int64_t> repeats;
  if (!in.has_rank() || !input_ints(ctx, 1, &repeats)) {
    set_output(ctx, 0, in.dtype, in.has_rank() ? std::optional(unknown_dims(in.rank())) : std::nullopt);
    return Status::OK();
  }
  KILN_ENSURE(static_cast<int>(repeats.size()) == in.rank(), "repeats has {} entries for a rank-{} input",
              repeats.size(), in.rank());
  std::vector<ir::Dim> out;
  for (int i = 0; i < in.rank(); ++i) {
    KILN_ENSURE(repeats[i] >= 0, "repeats must not be negative");
    out.push_back(dim_product({(*in.shape)[i], ir::Dim(repeats[i])}));
  }
  set_output(ctx, 0, in.dtype, out);
  return Status::OK();
}

}  // namespace

void register_tensor_layout_ops(OpRegistry& r) {
  r.add({.op_type = "Transpose", .attributes = {"perm"}, .infer = infer_transpose, .cost = movement_cost});
  r.add({.op_type = "Concat", .attributes = {"axis"}, .infer = infer_concat, .cost = movement_cost});
  r.add({.op_type = "Split",
         .attributes = {"axis", "split", "num_outputs"},
         .canonicalize =
             [](ir::Node& node, ir::Graph& g) {
               // Opset < 13 gives the sizes as an attribute.
               if (node.has_attr("split"))
                 attribute_to_input(node, g, "split", 1, ints_to_tensor(node.attr_ints("split")));
               return Status::OK();
             },
         .infer = infer_split,
         .cost = movement_cost});
  r.add({.op_type = "Slice",
         .attributes = {"starts", "ends", "axes"},
         .canonicalize = canonicalize_slice,
         .infer = infer_slice,
         .cost = movement_cost});
  r.add({.op_type = "Expand", .attributes = {}, .infer = infer_expand, .cost = movement_cost});
  r.add({.op_type = "Tile", .attributes = {}, .infer = infer_tile, .cost = movement_cost});
}

}  // namespace kiln::ops
