// CPU kernels for Gemm, MatMul and MatMulInteger. Float work goes through OpenBLAS; fp16/bf16
// are widened to float first; integer types use the plain loop in matmul.h.
#include "backends/cpu/matmul.h"

#include <cblas.h>

#include "core/error.h"
#include "ops/matmul.h"
#include "ops/shape_util.h"

namespace kiln::cpu {
namespace {

// BLAS rejects k = 0 (its leading dimensions would be 0); the product is then empty.
template <class T>
void scale(int64_t count, T beta, T* c) {
  for (int64_t i = 0; i < count; ++i) c[i] = beta == T(0) ? T(0) : beta * c[i];
}

}  // namespace

void blas_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, const float* b,
               float beta, float* c) {
  if (m == 0 || n == 0) return;
  if (k == 0) return scale(m * n, beta, c);
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n, k, alpha, a,
              ta ? m : k, b, tb ? k : n, beta, c, n);
}

void blas_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a, const double* b,
               double beta, double* c) {
  if (m == 0 || n == 0) return;
  if (k == 0) return scale(m * n, beta, c);
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n, k, alpha, a,
              ta ? m : k, b, tb ? k : n, beta, c, n);
}

namespace {

using MatMulTypes = TypeList<float, double, float16, bfloat16, int32_t, int64_t, uint32_t, uint64_t>;

Status unsupported_dtype(const KernelContext& ctx) {
  return unsupported("dtype {} is not supported", dtype_name(ctx.input(0).dtype()));
}

// Y = alpha * op(A) op(B) + beta * C, with C broadcast to [M, N].
template <class T>
void run_gemm(KernelContext& ctx) {
  using C = compute_t<T>;
  const ir::Node& node = ctx.node();
  const bool ta = node.attr_i("transA", 0) != 0;
  const bool tb = node.attr_i("transB", 0) != 0;
  const auto alpha = static_cast<C>(node.attr_f("alpha", 1.0f));
  auto beta = static_cast<C>(node.attr_f("beta", 1.0f));
  const Tensor& a = ctx.input(0);
  Tensor& y = ctx.alloc_output(0);
  const int64_t m = y.dim(0), n = y.dim(1), k = ta ? a.dim(0) : a.dim(1);
  std::vector<C> out(static_cast<size_t>(m * n), C(0));
  if (ctx.has_input(2) && beta != C(0)) {
    const Tensor& c = ctx.input(2);
    const ComputeData<T> cd(c);
    const int64_t rows = c.rank() == 2 ? c.dim(0) : 1;
    const int64_t cols = c.rank() >= 1 ? c.dim(-1) : 1;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) out[i * n + j] = cd.data()[(rows == 1 ? 0 : i) * cols + (cols == 1 ? 0 : j)];
    }
  } else {
    beta = C(0);
  }
  gemm<C>(ta, tb, m, n, k, alpha, ComputeData<T>(a).data(), ComputeData<T>(ctx.input(1)).data(), beta, out.data());
  store<T>(out, &y);
}

// For each output batch (flattened), the flat batch index into an operand whose batch dims
// `mine` broadcast to `full`.
std::vector<int64_t> batch_offsets(const std::vector<int64_t>& full, const std::vector<int64_t>& mine) {
  const int64_t count = Tensor::numel_of(full);
  std::vector<int64_t> out(static_cast<size_t>(count));
  std::vector<int64_t> idx(full.size(), 0);
  for (int64_t b = 0; b < count; ++b) {
    int64_t off = 0;
    for (size_t d = 0; d < full.size(); ++d) off = off * mine[d] + (mine[d] == 1 ? 0 : idx[d]);
    out[b] = off;
    for (int d = static_cast<int>(full.size()) - 1; d >= 0; --d) {
      if (++idx[d] < full[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

// C[batch] = A[batch] * B[batch] on compute-type buffers laid out as `s` describes.
template <class C>
void batched_matmul(const ops::MatMulShape& s, const C* a, const C* b, C* out) {
  const int64_t batches = Tensor::numel_of(s.batch);
  if (Tensor::numel_of(s.b_batch) == 1 && s.a_batch == s.batch) {
    // B is shared by every batch and A is contiguous: one GEMM with the batches stacked in M.
    gemm<C>(false, false, batches * s.m, s.n, s.k, C(1), a, b, C(0), out);
    return;
  }
  const auto ao = batch_offsets(s.batch, s.a_batch);
  const auto bo = batch_offsets(s.batch, s.b_batch);
  for (int64_t i = 0; i < batches; ++i) {
    gemm<C>(false, false, s.m, s.n, s.k, C(1), a + ao[i] * s.m * s.k, b + bo[i] * s.k * s.n, C(0),
            out + i * s.m * s.n);
  }
}

template <class T>
Status run_matmul(KernelContext& ctx) {
  using C = compute_t<T>;
  ops::MatMulShape s;
  KILN_RETURN_IF_ERROR(ops::matmul_shape(ctx.input(0).shape(), ctx.input(1).shape(), &s));
  Tensor& y = ctx.alloc_output(0);
  std::vector<C> out(static_cast<size_t>(y.numel()));
  batched_matmul<C>(s, ComputeData<T>(ctx.input(0)).data(), ComputeData<T>(ctx.input(1)).data(), out.data());
  store<T>(out, &y);
  return Status::OK();
}

// An operand of MatMulInteger as int32 with its zero point subtracted. A's zero point is per
// row (the second-to-last dim), B's per column (the last dim), or a scalar.
Status widen_minus_zero_point(const KernelContext& ctx, int operand, int zp, bool per_row,
                              std::vector<int32_t>* out) {
  const Tensor& t = ctx.input(operand);
  std::vector<int64_t> z = {0};
  if (ctx.has_input(zp)) KILN_RETURN_IF_ERROR(ops::tensor_to_ints(ctx.input(zp), &z));
  const int64_t cols = t.dim(-1);
  const int64_t rows = t.rank() >= 2 ? t.dim(-2) : 1;
  const int64_t along = per_row ? rows : cols;
  if (z.size() != 1 && static_cast<int64_t>(z.size()) != along) {
    return invalid_argument("zero point input {} has {} values; expected 1 or {}", zp, z.size(), along);
  }
  out->resize(static_cast<size_t>(t.numel()));
  dispatch<TypeList<uint8_t, int8_t>>(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = t.data_as<T>();
    for (int64_t i = 0; i < t.numel(); ++i) {
      const int64_t pos = per_row ? (i / cols) % rows : i % cols;
      (*out)[i] = static_cast<int32_t>(p[i]) - static_cast<int32_t>(z.size() == 1 ? z[0] : z[pos]);
    }
  });
  return Status::OK();
}

Status run_matmul_integer(KernelContext& ctx) {
  ops::MatMulShape s;
  KILN_RETURN_IF_ERROR(ops::matmul_shape(ctx.input(0).shape(), ctx.input(1).shape(), &s));
  std::vector<int32_t> a, b;
  KILN_RETURN_IF_ERROR(widen_minus_zero_point(ctx, 0, 2, true, &a));
  KILN_RETURN_IF_ERROR(widen_minus_zero_point(ctx, 1, 3, false, &b));
  Tensor& y = ctx.alloc_output(0);
  batched_matmul<int32_t>(s, a.data(), b.data(), y.data_as<int32_t>());
  return Status::OK();
}

}  // namespace

void register_matmul_kernels(KernelRegistry& r) {
  r.add("Gemm", [](KernelContext& ctx) {
    const bool ok = dispatch<MatMulTypes>(ctx.input(0).dtype(), [&](auto tag) {
      run_gemm<typename decltype(tag)::type>(ctx);
    });
    return ok ? Status::OK() : unsupported_dtype(ctx);
  });
  r.add("MatMul", [](KernelContext& ctx) {
    Status st = unsupported_dtype(ctx);
    dispatch<MatMulTypes>(ctx.input(0).dtype(), [&](auto tag) { st = run_matmul<typename decltype(tag)::type>(ctx); });
    return st;
  });
  r.add("MatMulInteger", run_matmul_integer);
  register_einsum_kernels(r);
  register_softmax_kernels(r);
}

}  // namespace kiln::cpu
