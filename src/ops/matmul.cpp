// Matrix-product ops: Gemm, MatMul, MatMulInteger (schemas, shape inference, cost). Einsum
// and the Softmax family live in matmul_einsum.cpp and matmul_softmax.cpp.
#include "ops/matmul.h"

#include "core/error.h"
#include "ops/shape_util.h"

namespace kiln::ops {
namespace {

Status check_inner_dims(const ir::Dim& ka, const ir::Dim& kb) {
  if (ka.known() && kb.known() && ka.value != kb.value) {
    return invalid_argument("inner dimensions do not match ({} vs {})", ka.value, kb.value);
  }
  return Status::OK();
}

// Static numpy-matmul output shape: 1-D operands are promoted (and the promoted dim dropped
// again), batch dims broadcast.
Status infer_matmul_dims(const ir::TensorType& a, const ir::TensorType& b, std::optional<std::vector<ir::Dim>>* out) {
  if (!a.has_rank() || !b.has_rank()) {
    *out = std::nullopt;
    return Status::OK();
  }
  const auto& sa = *a.shape;
  const auto& sb = *b.shape;
  if (sa.empty() || sb.empty()) return invalid_argument("MatMul operands must have rank >= 1");
  const ir::Dim ka = sa.back();
  const ir::Dim kb = sb.size() == 1 ? sb[0] : sb[sb.size() - 2];
  KILN_RETURN_IF_ERROR(check_inner_dims(ka, kb));
  ir::TensorType ba{a.dtype, std::vector<ir::Dim>(sa.begin(), sa.end() - std::min<size_t>(sa.size(), 2))};
  ir::TensorType bb{b.dtype, std::vector<ir::Dim>(sb.begin(), sb.end() - std::min<size_t>(sb.size(), 2))};
  std::vector<ir::Dim> dims;
  KILN_RETURN_IF_ERROR(broadcast_types({&ba, &bb}, &dims));
  if (sa.size() >= 2) dims.push_back(sa[sa.size() - 2]);
  if (sb.size() >= 2) dims.push_back(sb.back());
  *out = std::move(dims);
  return Status::OK();
}

Cost matmul_cost(const CostContext& ctx) {
  Cost c;
  MatMulShape ms;
  const auto a = ctx.input_types[0]->concrete();
  const auto b = ctx.input_types[1]->concrete();
  if (matmul_shape(a, b, &ms).ok()) {
    c.macs = static_cast<double>(Tensor::numel_of(ms.batch)) * ms.m * ms.n * ms.k;
  }
  for (const auto* t : ctx.input_types) {
    if (t) c.bytes += static_cast<double>(Tensor::numel_of(t->concrete()) * dtype_size(t->dtype));
  }
  for (const auto* t : ctx.output_types) {
    if (t) c.bytes += static_cast<double>(Tensor::numel_of(t->concrete()) * dtype_size(t->dtype));
  }
  return c;
}

constexpr std::initializer_list<DType> kMatMulTypes = {DType::kFloat32, DType::kFloat64, DType::kFloat16,
                                                       DType::kBFloat16, DType::kInt32,   DType::kInt64,
                                                       DType::kUInt32,  DType::kUInt64};

Status infer_gemm(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(expect_dtype(ctx, 0, kMatMulTypes));
  const auto& a = ctx.input_type(0);
  const auto& b = ctx.input_type(1);
  KILN_ENSURE(b.dtype == a.dtype, "A is {} but B is {}", dtype_name(a.dtype), dtype_name(b.dtype));
  if (!a.has_rank() || !b.has_rank()) {
    set_output(ctx, 0, a.dtype, std::vector<ir::Dim>(2));
    return Status::OK();
  }
  KILN_ENSURE(a.rank() == 2 && b.rank() == 2, "Gemm needs 2-D A and B, got {} and {}", a.to_string(),
              b.to_string());
  const bool ta = ctx.node.attr_i("transA", 0) != 0;
  const bool tb = ctx.node.attr_i("transB", 0) != 0;
  const ir::Dim m = (*a.shape)[ta ? 1 : 0];
  const ir::Dim n = (*b.shape)[tb ? 0 : 1];
  KILN_RETURN_IF_ERROR(check_inner_dims((*a.shape)[ta ? 0 : 1], (*b.shape)[tb ? 1 : 0]));
  if (ctx.has_input(2)) {
    const auto& c = ctx.input_type(2);
    KILN_ENSURE(c.dtype == a.dtype, "C is {} but A is {}", dtype_name(c.dtype), dtype_name(a.dtype));
    // C broadcasts unidirectionally to [M, N]: it must not widen the result.
    if (c.has_rank()) {
      KILN_ENSURE(c.rank() <= 2, "C must have rank <= 2, got {}", c.to_string());
      ir::TensorType y{a.dtype, {m, n}};
      std::vector<ir::Dim> dims;
      KILN_RETURN_IF_ERROR(broadcast_types({&y, &c}, &dims));
      for (int i = 0; i < 2; ++i) {
        const ir::Dim& want = i == 0 ? m : n;
        KILN_ENSURE(!(want.known() && dims[i].known() && dims[i].value != want.value),
                    "C {} does not broadcast to [{}, {}]", c.to_string(), m.to_string(), n.to_string());
      }
    }
  }
  set_output(ctx, 0, a.dtype, std::vector<ir::Dim>{m, n});
  return Status::OK();
}

Cost gemm_cost(const CostContext& ctx) {
  Cost c;
  const auto a = ctx.input_types[0]->concrete();
  const auto y = ctx.output_types[0]->concrete();
  const int64_t k = ctx.node.attr_i("transA", 0) ? a[0] : a[1];
  c.macs = static_cast<double>(y[0]) * y[1] * k;
  c.flops = static_cast<double>(y[0]) * y[1] * 2;  // alpha scaling and the C term
  for (const auto* t : ctx.input_types) {
    if (t) c.bytes += static_cast<double>(Tensor::numel_of(t->concrete()) * dtype_size(t->dtype));
  }
  c.bytes += static_cast<double>(Tensor::numel_of(y) * dtype_size(ctx.output_types[0]->dtype));
  return c;
}

Status infer_matmul(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(expect_dtype(ctx, 0, kMatMulTypes));
  const auto& a = ctx.input_type(0);
  const auto& b = ctx.input_type(1);
  KILN_ENSURE(b.dtype == a.dtype, "A is {} but B is {}", dtype_name(a.dtype), dtype_name(b.dtype));
  std::optional<std::vector<ir::Dim>> dims;
  KILN_RETURN_IF_ERROR(infer_matmul_dims(a, b, &dims));
  set_output(ctx, 0, a.dtype, std::move(dims));
  return Status::OK();
}

// A zero point is a scalar or a 1-D tensor (per row of A / per column of B).
Status check_zero_point(const InferContext& ctx, int zp, int operand) {
  if (!ctx.has_input(zp)) return Status::OK();
  const auto& t = ctx.input_type(zp);
  KILN_ENSURE(t.dtype == ctx.input_type(operand).dtype, "zero point input {} is {} but its operand is {}", zp,
              dtype_name(t.dtype), dtype_name(ctx.input_type(operand).dtype));
  KILN_ENSURE(!t.has_rank() || t.rank() <= 1, "zero point input {} must be a scalar or 1-D, got {}", zp,
              t.to_string());
  return Status::OK();
}

Status infer_matmul_integer(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(expect_dtype(ctx, 0, {DType::kUInt8, DType::kInt8}));
  KILN_RETURN_IF_ERROR(expect_dtype(ctx, 1, {DType::kUInt8, DType::kInt8}));
  KILN_RETURN_IF_ERROR(check_zero_point(ctx, 2, 0));
  KILN_RETURN_IF_ERROR(check_zero_point(ctx, 3, 1));
  std::optional<std::vector<ir::Dim>> dims;
  KILN_RETURN_IF_ERROR(infer_matmul_dims(ctx.input_type(0), ctx.input_type(1), &dims));
  set_output(ctx, 0, DType::kInt32, std::move(dims));
  return Status::OK();
}

}  // namespace

Status matmul_shape(const std::vector<int64_t>& a, const std::vector<int64_t>& b, MatMulShape* out) {
  if (a.empty() || b.empty()) return invalid_argument("MatMul operands must have rank >= 1");
  MatMulShape s;
  s.k = a.back();
  const int64_t kb = b.size() == 1 ? b[0] : b[b.size() - 2];
  if (s.k != kb) return invalid_argument("inner dimensions do not match ({} vs {})", s.k, kb);
  s.m = a.size() >= 2 ? a[a.size() - 2] : 1;
  s.n = b.size() >= 2 ? b.back() : 1;
  std::vector<int64_t> ab(a.begin(), a.end() - std::min<size_t>(a.size(), 2));
  std::vector<int64_t> bb(b.begin(), b.end() - std::min<size_t>(b.size(), 2));
  KILN_RETURN_IF_ERROR(broadcast_shapes({ab, bb}, &s.batch));
  s.a_batch.assign(s.batch.size() - ab.size(), 1);
  s.a_batch.insert(s.a_batch.end(), ab.begin(), ab.end());
  s.b_batch.assign(s.batch.size() - bb.size(), 1);
  s.b_batch.insert(s.b_batch.end(), bb.begin(), bb.end());
  s.out = s.batch;
  if (a.size() >= 2) s.out.push_back(s.m);
  if (b.size() >= 2) s.out.push_back(s.n);
  *out = std::move(s);
  return Status::OK();
}

void register_matmul_ops(OpRegistry& r) {
  // "broadcast" is the opset < 7 flag; broadcasting C is always allowed here.
  r.add({.op_type = "Gemm",
         .attributes = {"alpha", "beta", "transA", "transB", "broadcast"},
         .infer = infer_gemm,
         .cost = gemm_cost});
  r.add({.op_type = "MatMul", .attributes = {}, .infer = infer_matmul, .cost = matmul_cost});
  r.add({.op_type = "MatMulInteger", .attributes = {}, .infer = infer_matmul_integer, .cost = matmul_cost});
  register_einsum_ops(r);
  register_softmax_ops(r);
}

}  // namespace kiln::ops
