// GEMM helpers shared by the CPU matmul-family kernels (Gemm, MatMul, MatMulInteger, Einsum).
#pragma once
#include <cstdint>
#include <type_traits>
#include <vector>

#include "backends/cpu/kernel.h"
#include "core/dispatch.h"

namespace kiln::cpu {

void register_einsum_kernels(KernelRegistry& r);
void register_softmax_kernels(KernelRegistry& r);

// Row-major, contiguous C[m,n] = alpha * op(A) * op(B) + beta * C, where op transposes when
// asked (A is [m,k] or [k,m], B is [k,n] or [n,k]). OpenBLAS for float/double.
void blas_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, const float* b,
               float beta, float* c);
void blas_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a, const double* b,
               double beta, double* c);

// The same for any arithmetic compute type; integers use a plain loop (wrapping like the
// integer type itself).
template <class T>
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a, const T* b, T beta, T* c) {
  if constexpr (std::is_floating_point_v<T>) {
    blas_gemm(ta, tb, m, n, k, alpha, a, b, beta, c);
  } else {
    std::vector<T> acc(static_cast<size_t>(n));
    for (int64_t i = 0; i < m; ++i) {
      std::fill(acc.begin(), acc.end(), T(0));
      for (int64_t p = 0; p < k; ++p) {
        const T av = ta ? a[p * m + i] : a[i * k + p];
        for (int64_t j = 0; j < n; ++j) acc[j] += av * (tb ? b[j * k + p] : b[p * n + j]);
      }
      T* row = c + i * n;
      for (int64_t j = 0; j < n; ++j) row[j] = alpha * acc[j] + (beta == T(0) ? T(0) : beta * row[j]);
    }
  }
}

// The elements of a tensor in T's compute type (float for fp16/bf16), converting only when
// the storage type differs.
template <class T>
class ComputeData {
 public:
  using C = compute_t<T>;
  explicit ComputeData(const Tensor& t) {
    const T* p = t.data_as<T>();
    if constexpr (std::is_same_v<C, T>) {
      data_ = p;
    } else {
      buf_.resize(static_cast<size_t>(t.numel()));
      for (size_t i = 0; i < buf_.size(); ++i) buf_[i] = static_cast<C>(p[i]);
      data_ = buf_.data();
    }
  }
  const C* data() const { return data_; }

 private:
  const C* data_ = nullptr;
  std::vector<C> buf_;
};

// Stores compute-type values into a tensor of storage type T.
template <class T>
void store(const std::vector<compute_t<T>>& v, Tensor* out) {
  T* p = out->data_as<T>();
  for (size_t i = 0; i < v.size(); ++i) p[i] = convert<T>(v[i]);
}

}  // namespace kiln::cpu
