// im2col / col2im for any number of spatial dims, and the GEMM wrappers convolutions use.
#include <cblas.h>

#include <algorithm>
#include <cstring>

#include "backends/cpu/conv_pool.h"

namespace kiln::cpu {

namespace {

int64_t product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

// First grid position o >= 0 with o*s + off >= 0, and the end of those with o*s + off < size.
void valid_range(int64_t off, int64_t s, int64_t size, int64_t grid, int64_t* lo, int64_t* hi) {
  *lo = off >= 0 ? 0 : (-off + s - 1) / s;
  *hi = size - off <= 0 ? 0 : (size - off + s - 1) / s;
  *hi = std::min(*hi, grid);
  *lo = std::min(*lo, *hi);
}

// Walks every (channel, kernel offset, row of grid positions along all but the last dim) and
// hands the row to `row_fn(tap, row_start, image_row_or_null, off, lo, hi)`: `tap` is
// channel * kernel_size + kernel offset (the im2col row), `row_start` the grid index of the
// row's first position; positions [lo, hi) of the row map to image_row[o*stride + off], and a
// null image row means the whole row lies in the padding. The last dim is handled in one call
// so the inner loop is tight.
template <class Image, class RowFn>
void walk_rows(Image* image, int64_t channels, const ColGeometry& g, RowFn&& row_fn) {
  const int nsp = g.nsp, last = nsp - 1;
  const int64_t ksize = g.kernel_size(), gsize = g.grid_size(), isize = g.image_size();
  const int64_t row_len = g.grid[last];
  const int64_t outer_rows = row_len == 0 ? 0 : gsize / row_len;
  std::vector<int64_t> k(nsp), off(nsp), o(nsp);
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t kf = 0; kf < ksize; ++kf) {
      for (int64_t rem = kf, d = last; d >= 0; --d) {
        k[d] = rem % g.kernel[d];
        rem /= g.kernel[d];
        off[d] = k[d] * g.dilations[d] - g.pad_begin[d];
      }
      int64_t lo = 0, hi = 0;
      valid_range(off[last], g.strides[last], g.image[last], row_len, &lo, &hi);
      for (int64_t r = 0; r < outer_rows; ++r) {
        // Image offset of the row along the outer dims, or -1 when it falls in padding.
        int64_t img_off = 0;
        for (int64_t rem = r, d = last - 1; d >= 0; --d) {
          o[d] = rem % g.grid[d];
          rem /= g.grid[d];
        }
        for (int d = 0; d < last; ++d) {
          const int64_t coord = o[d] * g.strides[d] + off[d];
          if (coord < 0 || coord >= g.image[d]) {
            img_off = -1;
            break;
          }
          img_off = img_off * g.image[d] + coord;
        }
        Image* img_row = img_off < 0 ? nullptr : image + c * isize + img_off * g.image[last];
        row_fn(c * ksize + kf, r * row_len, img_row, off[last], lo, hi);
      }
    }
  }
}

}  // namespace

int64_t ColGeometry::image_size() const {
  return product(image);
}
int64_t ColGeometry::grid_size() const {
  return product(grid);
}
int64_t ColGeometry::kernel_size() const {
  return product(kernel);
}

template <class T>
void im2col(const T* image, int64_t channels, const ColGeometry& g, T* col) {
  const int64_t s = g.strides[g.nsp - 1], row_len = g.grid[g.nsp - 1];
  const int64_t gsize = g.grid_size();
  walk_rows(image, channels, g,
            [&](int64_t tap, int64_t row_start, const T* src, int64_t off, int64_t lo, int64_t hi) {
              T* dst = col + tap * gsize + row_start;
              if (!src) {
                std::fill(dst, dst + row_len, T(0));
                return;
              }
              std::fill(dst, dst + lo, T(0));
              if (s == 1) {
                if (hi > lo) std::memcpy(dst + lo, src + lo + off, static_cast<size_t>(hi - lo) * sizeof(T));
              } else {
                for (int64_t o = lo; o < hi; ++o) dst[o] = src[o * s + off];
              }
              std::fill(dst + hi, dst + row_len, T(0));
            });
}

template <class T>
void col2im(const T* col, int64_t channels, const ColGeometry& g, T* image) {
  const int64_t s = g.strides[g.nsp - 1];
  const int64_t gsize = g.grid_size();
  walk_rows(image, channels, g,
            [&](int64_t tap, int64_t row_start, T* dst, int64_t off, int64_t lo, int64_t hi) {
              if (!dst) return;
              const T* src = col + tap * gsize + row_start;
              for (int64_t o = lo; o < hi; ++o) dst[o * s + off] += src[o];
            });
}

template <class T>
void depthwise_accumulate(const T* image, const ColGeometry& g, const T* weights, T* out) {
  const int64_t s = g.strides[g.nsp - 1];
  walk_rows(image, 1, g,
            [&](int64_t tap, int64_t row_start, const T* src, int64_t off, int64_t lo, int64_t hi) {
              if (!src) return;
              const T wt = weights[tap];
              T* dst = out + row_start;
              if (s == 1) {
                for (int64_t o = lo; o < hi; ++o) dst[o] += wt * src[o + off];
              } else {
                for (int64_t o = lo; o < hi; ++o) dst[o] += wt * src[o * s + off];
              }
            });
}

template void im2col<float>(const float*, int64_t, const ColGeometry&, float*);
template void im2col<double>(const double*, int64_t, const ColGeometry&, double*);
template void col2im<float>(const float*, int64_t, const ColGeometry&, float*);
template void col2im<double>(const double*, int64_t, const ColGeometry&, double*);
template void depthwise_accumulate<float>(const float*, const ColGeometry&, const float*, float*);
template void depthwise_accumulate<double>(const double*, const ColGeometry&, const double*, double*);

template <>
void gemm<float>(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                 const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n, k, alpha,
              a, lda, b, ldb, beta, c, ldc);
}

template <>
void gemm<double>(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
                  int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n, k, alpha,
              a, lda, b, ldb, beta, c, ldc);
}

}  // namespace kiln::cpu
