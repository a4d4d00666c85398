// Shape and data-movement ops: Identity, the family's registration, and the arithmetic
// shared by its schemas and kernels (tensor.h).
#include "ops/tensor.h"

#include <algorithm>
#include <set>

#include "core/error.h"
#include "ops/shape_util.h"

namespace kiln::ops {

Cost movement_cost(const CostContext& ctx) {
  Cost c;
  for (const auto* types : {&ctx.input_types, &ctx.output_types}) {
    for (const ir::TensorType* t : *types) {
      if (t && t->is_concrete())
        c.bytes += static_cast<double>(Tensor::numel_of(t->concrete()) * dtype_size(t->dtype));
    }
  }
  return c;
}

Cost view_cost(const CostContext&) {
  return {};
}

void attribute_to_input(ir::Node& node, ir::Graph& g, const std::string& attr, size_t index, Tensor value) {
  const std::string base = node.name.empty() && node.output(0) ? node.output(0)->name : node.name;
  ir::Value* v = g.add_constant(base + "_" + attr, std::move(value));
  if (node.inputs.size() <= index) node.inputs.resize(index + 1, nullptr);
  node.inputs[index] = v;
  v->consumers.push_back(&node);
  node.attrs.erase(attr);
}

SliceRange slice_range(int64_t dim, int64_t start, int64_t end, int64_t step) {
  SliceRange r;
  r.step = step;
  if (dim == 0) return r;
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    r.size = end > start ? (end - start + step - 1) / step : 0;
  } else {
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
    // -step cannot overflow in practice: a step of INT64_MIN would fail the size anyway.
    r.size = start > end ? (start - end + (-step) - 1) / (-step) : 0;
  }
  r.start = start;
  return r;
}

Status resolve_slice(int rank, const std::vector<int64_t>& starts, const std::vector<int64_t>& ends,
                     const std::vector<int64_t>& axes, const std::vector<int64_t>& steps,
                     std::vector<SliceSpec>* out) {
  const size_t n = starts.size();
  KILN_ENSURE(ends.size() == n, "starts has {} elements but ends has {}", n, ends.size());
  KILN_ENSURE(axes.empty() || axes.size() == n, "axes has {} elements, starts {}", axes.size(), n);
  KILN_ENSURE(steps.empty() || steps.size() == n, "steps has {} elements, starts {}", steps.size(), n);
  std::vector<int64_t> norm_axes;
  if (axes.empty()) {
    KILN_ENSURE(static_cast<int64_t>(n) <= rank, "{} starts for a rank-{} input", n, rank);
    for (size_t i = 0; i < n; ++i) norm_axes.push_back(static_cast<int64_t>(i));
  } else {
    KILN_RETURN_IF_ERROR(normalize_axes(axes, rank, &norm_axes));
  }
  out->clear();
  for (size_t i = 0; i < n; ++i) {
    const int64_t step = steps.empty() ? 1 : steps[i];
    KILN_ENSURE(step != 0, "slice step must not be 0");
    out->push_back({static_cast<int>(norm_axes[i]), starts[i], ends[i], step});
  }
  return Status::OK();
}

Status resolve_pads(int rank, const std::vector<int64_t>& pads, const std::vector<int64_t>& axes,
                    std::vector<int64_t>* begin, std::vector<int64_t>* end) {
  std::vector<int64_t> norm_axes;
  if (axes.empty()) {
    for (int i = 0; i < rank; ++i) norm_axes.push_back(i);
  } else {
    KILN_RETURN_IF_ERROR(normalize_axes(axes, rank, &norm_axes));
  }
  const size_t n = norm_axes.size();
  KILN_ENSURE(pads.size() == 2 * n, "pads has {} elements; expected {} for {} axes", pads.size(), 2 * n, n);
  begin->assign(rank, 0);
  end->assign(rank, 0);
  for (size_t i = 0; i < n; ++i) {
    (*begin)[norm_axes[i]] = pads[i];
    (*end)[norm_axes[i]] = pads[n + i];
  }
  return Status::OK();
}

Status parse_pad_mode(const std::string& mode, PadMode* out) {
  if (mode == "constant")
    *out = PadMode::kConstant;
  else if (mode == "reflect")
    *out = PadMode::kReflect;
  else if (mode == "edge")
    *out = PadMode::kEdge;
  else if (mode == "wrap")
    *out = PadMode::kWrap;
  else
    return unsupported("pad mode '{}' is not supported", mode);
  return Status::OK();
}

int64_t pad_source_index(PadMode mode, int64_t i, int64_t dim) {
  if (i >= 0 && i < dim) return i;
  switch (mode) {
    case PadMode::kConstant:
      return -1;
    case PadMode::kEdge:
      return i < 0 ? 0 : dim - 1;
    case PadMode::kWrap:
      return ((i % dim) + dim) % dim;
    case PadMode::kReflect: {
      if (dim == 1) return 0;
      const int64_t period = 2 * (dim - 1);  // reflect excludes the edge element itself
      const int64_t m = ((i % period) + period) % period;
      return m < dim ? m : period - m;
    }
  }
  return -1;
}

Status normalize_axes(const std::vector<int64_t>& axes, int rank, std::vector<int64_t>* out) {
  out->clear();
  std::set<int64_t> seen;
  for (int64_t a : axes) {
    int64_t na = 0;
    KILN_RETURN_IF_ERROR(normalize_axis(a, rank, &na));
    KILN_ENSURE(na < rank, "axis {} is out of range for rank {}", a, rank);
    KILN_ENSURE(seen.insert(na).second, "axis {} is repeated", a);
    out->push_back(na);
  }
  return Status::OK();
}

ir::Dim dim_product(const std::vector<ir::Dim>& dims) {
  int64_t known = 1;
  const ir::Dim* unknown = nullptr;
  int n_unknown = 0;
  for (const ir::Dim& d : dims) {
    if (d.known()) {
      known *= d.value;
    } else {
      unknown = &d;
      ++n_unknown;
    }
  }
  if (n_unknown == 0) return known;
  if (known == 0) return 0;
  if (n_unknown == 1 && known == 1) return *unknown;
  return {};
}

bool input_ints(const InferContext& ctx, int i, std::vector<int64_t>* out) {
  const Tensor* v = ctx.has_input(i) ? ctx.input_value(i) : nullptr;
  return v && tensor_to_ints(*v, out).ok();
}

int64_t input_length(const InferContext& ctx, int i) {
  if (!ctx.has_input(i)) return -1;
  const ir::TensorType& t = ctx.input_type(i);
  if (!t.has_rank()) return -1;
  if (t.rank() == 0) return 1;
  return t.rank() == 1 && (*t.shape)[0].known() ? (*t.shape)[0].value : -1;
}

std::vector<ir::Dim> unknown_dims(int rank) {
  return std::vector<ir::Dim>(rank, ir::Dim());
}

void register_tensor_ops(OpRegistry& r) {
  r.add({.op_type = "Identity",
         .attributes = {},
         .infer =
             [](InferContext& ctx) {
               same_as_input(ctx, 0, 0);
               if (ctx.input_value(0)) ctx.output_values[0] = *ctx.input_value(0);
               return Status::OK();
             },
         .cost = view_cost});
  register_tensor_reshape_ops(r);
  register_tensor_layout_ops(r);
  register_tensor_pad_ops(r);
  register_tensor_generate_ops(r);
}

}  // namespace kiln::ops
