// Internals of the CPU convolution and pooling kernels, shared between their files.
#pragma once
#include <cstdint>
#include <vector>

#include "backends/cpu/kernel.h"
#include "ops/conv_pool.h"

namespace kiln::cpu {

// Geometry of im2col / col2im: `image` is the spatial grid a window slides over, `grid` the
// positions it takes. Window position o covers image coordinate o*stride + k*dilation - pad_begin
// for kernel offset k. For Conv the image is the input and the grid the output; for
// ConvTranspose the other way round.
struct ColGeometry {
  int nsp = 0;
  std::vector<int64_t> image, grid, kernel, strides, dilations, pad_begin;

  int64_t image_size() const;
  int64_t grid_size() const;
  int64_t kernel_size() const;
};

// col[c * kernel_size + k][p] = image[c][coordinate of window p at offset k], 0 when padding.
template <class T>
void im2col(const T* image, int64_t channels, const ColGeometry& g, T* col);
// The adjoint: image[c][...] += col[c * kernel_size + k][p] for in-range coordinates.
template <class T>
void col2im(const T* col, int64_t channels, const ColGeometry& g, T* image);

// One channel of a depthwise convolution (one input and one output channel per group):
// out[p] += sum_k weights[k] * image[coordinate of window p at offset k]. Cheaper than a
// GEMM with a single row.
template <class T>
void depthwise_accumulate(const T* image, const ColGeometry& g, const T* weights, T* out);

// C = alpha * op(A) * op(B) + beta * C, row major (cblas_sgemm / cblas_dgemm).
template <class T>
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
          const T* b, int64_t ldb, T beta, T* c, int64_t ldc);

// A convolution resolved for the node's concrete inputs: the window and channel bookkeeping.
struct ConvProblem {
  ops::Window win;
  int64_t batch = 0, in_channels = 0, out_channels = 0, group = 1;
};

// Reads X (input 0), W (input `w_slot`) and the optional bias (`b_slot`, -1 for none) of a
// Conv-like node (ConvTranspose when `transpose`) and checks that they fit together.
Status resolve_conv_problem(const KernelContext& ctx, bool transpose, int w_slot, int b_slot, ConvProblem* p);

// y = conv(x, w) + bias (bias may be null); y must be zero-filled. T is float or double.
template <class T>
void conv_forward(const ConvProblem& p, const T* x, const T* w, const T* bias, T* y);

void register_conv_kernels(KernelRegistry& r);
void register_conv_quant_kernels(KernelRegistry& r);
void register_pool_kernels(KernelRegistry& r);

}  // namespace kiln::cpu
