// NonZero, OneHot and CumSum.
#include "core/dispatch.h"
#include "ops/index.h"
#include "ops/shape_util.h"

namespace kiln::ops {
namespace {

// The output's second dim is the number of non-zeros, known only with the input's value.
Status infer_nonzero(InferContext& ctx) {
  const auto& x = ctx.input_type(0);
  if (!x.has_rank()) {
    set_output(ctx, 0, DType::kInt64, std::vector<ir::Dim>(2));
    return Status::OK();
  }
  ir::Dim count;
  if (const Tensor* v = ctx.input_value(0)) {
    int64_t n = 0;
    const bool ok = dispatch<AllTypes>(v->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* p = v->data_as<T>();
      for (int64_t i = 0; i < v->numel(); ++i) n += is_nonzero(p[i]) ? 1 : 0;
    });
    if (!ok) return unsupported("NonZero does not support {}", dtype_name(v->dtype()));
    count = n;
  }
  set_output(ctx, 0, DType::kInt64, std::vector<ir::Dim>{ir::Dim(x.rank()), count});
  return Status::OK();
}

Status infer_onehot(InferContext& ctx) {
  const auto& idx = ctx.input_type(0);
  const auto& values = ctx.input_type(2);
  if (!idx.has_rank()) {
    set_output(ctx, 0, values.dtype, std::nullopt);
    return Status::OK();
  }
  const int rank = idx.rank() + 1;
  int64_t axis = 0;
  KILN_RETURN_IF_ERROR(normalize_axis(ctx.node.attr_i("axis", -1), rank, &axis));
  ir::Dim depth;
  if (const Tensor* d = ctx.input_value(1)) {
    std::vector<double> v;
    KILN_RETURN_IF_ERROR(tensor_to_doubles(*d, &v));
    KILN_ENSURE(v.size() == 1, "depth must hold one value, got {}", v.size());
    KILN_ENSURE(v[0] >= 1, "depth must be positive, got {}", v[0]);
    depth = static_cast<int64_t>(v[0]);
  }
  std::vector<ir::Dim> out = *idx.shape;
  out.insert(out.begin() + axis, depth);
  set_output(ctx, 0, values.dtype, std::move(out));
  return Status::OK();
}

Status infer_cumsum(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(expect_dtype(ctx, 0,
                                    {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
                                     DType::kInt32, DType::kInt64, DType::kUInt32, DType::kUInt64}));
  KILN_RETURN_IF_ERROR(expect_dtype(ctx, 1, {DType::kInt32, DType::kInt64}));
  const auto& x = ctx.input_type(0);
  if (const Tensor* a = ctx.input_value(1); a && x.has_rank()) {
    std::vector<int64_t> axis;
    KILN_RETURN_IF_ERROR(tensor_to_ints(*a, &axis));
    KILN_ENSURE(axis.size() == 1, "axis must hold one value, got {}", axis.size());
    int64_t ax = 0;
    KILN_RETURN_IF_ERROR(normalize_axis(axis[0], x.rank(), &ax));
  }
  same_as_input(ctx, 0, 0);
  return Status::OK();
}

}  // namespace

void register_index_misc_ops(OpRegistry& r) {
  r.add({.op_type = "NonZero", .attributes = {}, .infer = infer_nonzero});
  r.add({.op_type = "OneHot", .attributes = {"axis"}, .infer = infer_onehot});
  r.add({.op_type = "CumSum", .attributes = {"exclusive", "reverse"}, .infer = infer_cumsum});
}

}  // namespace kiln::ops
