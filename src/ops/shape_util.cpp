#include "ops/shape_util.h"

#include <algorithm>

#include "core/dispatch.h"
#include "core/error.h"

namespace kiln::ops {

Status normalize_axis(int64_t axis, int rank, int64_t* out) {
  if (axis < -rank || axis >= std::max(rank, 1)) {
    return invalid_argument("axis {} is out of range for rank {}", axis, rank);
  }
  *out = axis < 0 ? axis + rank : axis;
  return Status::OK();
}

Status broadcast_types(const std::vector<const ir::TensorType*>& in, std::vector<ir::Dim>* out) {
  size_t rank = 0;
  for (const auto* t : in) rank = std::max(rank, t->shape->size());
  out->assign(rank, ir::Dim(1));
  for (const auto* t : in) {
    const auto& s = *t->shape;
    const size_t off = rank - s.size();
    for (size_t i = 0; i < s.size(); ++i) {
      ir::Dim& o = (*out)[off + i];
      const ir::Dim& d = s[i];
      if (d.known() && d.value == 1) continue;
      if (o.known() && o.value == 1) {
        o = d;
      } else if (d.known() && o.known()) {
        if (d.value != o.value) {
          std::string all;
          for (const auto* u : in) all += (all.empty() ? "" : " and ") + u->to_string();
          return invalid_argument("shapes {} cannot be broadcast together ({} vs {} at dim {})", all,
                                  d.value, o.value, off + i);
        }
      } else if (d.known()) {
        o = d;  // an unknown dim that is not 1 must equal the known one
      } else if (!o.known() && !(o == d)) {
        o = ir::Dim();
      }
    }
  }
  return Status::OK();
}

Status broadcast_shapes(const std::vector<std::vector<int64_t>>& in, std::vector<int64_t>* out) {
  size_t rank = 0;
  for (const auto& s : in) rank = std::max(rank, s.size());
  out->assign(rank, 1);
  for (const auto& s : in) {
    const size_t off = rank - s.size();
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t& o = (*out)[off + i];
      if (s[i] == 1) continue;
      if (o == 1) {
        o = s[i];
      } else if (o != s[i]) {
        std::string all;
        for (const auto& u : in) all += (all.empty() ? "" : " and ") + shape_to_string(u);
        return invalid_argument("shapes {} cannot be broadcast together", all);
      }
    }
  }
  return Status::OK();
}

Status tensor_to_ints(const Tensor& t, std::vector<int64_t>* out) {
  out->clear();
  const bool ok = dispatch<IntTypes>(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = t.data_as<T>();
    for (int64_t i = 0; i < t.numel(); ++i) out->push_back(static_cast<int64_t>(p[i]));
  });
  if (!ok) return invalid_argument("expected an integer tensor, got {}", dtype_name(t.dtype()));
  return Status::OK();
}

Status tensor_to_doubles(const Tensor& t, std::vector<double>* out) {
  out->clear();
  const bool ok = dispatch<AllTypes>(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = t.data_as<T>();
    for (int64_t i = 0; i < t.numel(); ++i) out->push_back(static_cast<double>(convert<double>(p[i])));
  });
  if (!ok) return invalid_argument("cannot read {} as numbers", dtype_name(t.dtype()));
  return Status::OK();
}

Tensor ints_to_tensor(const std::vector<int64_t>& v) {
  Tensor t(DType::kInt64, {static_cast<int64_t>(v.size())});
  std::copy(v.begin(), v.end(), t.data_as<int64_t>());
  return t;
}

void set_output(InferContext& ctx, int i, DType t, std::optional<std::vector<ir::Dim>> shape) {
  if (i >= ctx.num_outputs()) return;
  ctx.output_types[i].dtype = t;
  ctx.output_types[i].shape = std::move(shape);
}

void same_as_input(InferContext& ctx, int i, int j) {
  if (i >= ctx.num_outputs()) return;
  ctx.output_types[i] = ctx.input_type(j);
}

Status expect_dtype(const InferContext& ctx, int i, std::initializer_list<DType> allowed) {
  const DType t = ctx.input_type(i).dtype;
  for (DType a : allowed) {
    if (a == t) return Status::OK();
  }
  return unsupported("input {} has dtype {}, which {} does not accept", i, dtype_name(t), ctx.node.op_type);
}

}  // namespace kiln::ops
