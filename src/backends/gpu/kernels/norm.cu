// Normalization kernels. Row reductions use one warp per row for short rows and one block per
// row for long ones (rows of more than 1024 elements); statistics are computed in float.
#include "backends/gpu/check.h"
#include "backends/gpu/kernels/device_types.cuh"
#include "backends/gpu/kernels/norm.h"

namespace kiln::gpu::kern {
namespace {

constexpr int kBlock = 256;

enum class Red { kSum, kMax };

template <Red R>
__device__ __forceinline__ float combine(float a, float b) {
  return R == Red::kSum ? a + b : fmaxf(a, b);
}

// Reduces v over a group of G threads (G = 32: one warp; G = kBlock: the whole block, through
// `smem` of kBlock / 32 floats). Every thread of the group gets the result.
template <int G, Red R>
__device__ __forceinline__ float group_reduce(float v, float* smem) {
  for (int d = 16; d > 0; d /= 2) v = combine<R>(v, __shfl_xor_sync(0xffffffffu, v, d));
  if constexpr (G == 32) {
    return v;
  } else {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    __syncthreads();  // smem may still be read by a previous reduction
    if (lane == 0) smem[warp] = v;
    __syncthreads();
    v = lane < G / 32 ? smem[lane] : (R == Red::kSum ? 0.0f : -INFINITY);
    for (int d = 16; d > 0; d /= 2) v = combine<R>(v, __shfl_xor_sync(0xffffffffu, v, d));
    return v;
  }
}

// Rows of `len` contiguous elements (inner == 1); G threads per row.
template <class T, int G>
__global__ void softmax_rows(bool log, int64_t rows, int64_t len, const T* __restrict__ x, T* __restrict__ y) {
  __shared__ float smem[kBlock / 32];
  const int lane = threadIdx.x % G;
  const int64_t groups = static_cast<int64_t>(gridDim.x) * (blockDim.x / G);
  for (int64_t r = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / G; r < rows; r += groups) {
    const T* xr = x + r * len;
    T* yr = y + r * len;
    float m = -INFINITY;
    for (int64_t k = lane; k < len; k += G) m = fmaxf(m, to_float(xr[k]));
    m = group_reduce<G, Red::kMax>(m, smem);
    float s = 0.0f;
    for (int64_t k = lane; k < len; k += G) s += expf(to_float(xr[k]) - m);
    s = group_reduce<G, Red::kSum>(s, smem);
    const float log_s = logf(s), inv_s = 1.0f / s;
    for (int64_t k = lane; k < len; k += G) {
      const float z = to_float(xr[k]) - m;
      yr[k] = cvt<T>(log ? z - log_s : expf(z) * inv_s);
    }
  }
}

// inner > 1: one thread per (outer, inner) column, stepping `inner` along the axis (threads of
// a warp read neighbouring columns: coalesced).
template <class T>
__global__ void softmax_columns(bool log, int64_t outer, int64_t len, int64_t inner, const T* __restrict__ x,
                                T* __restrict__ y) {
  const int64_t n = outer * inner;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const int64_t base = (i / inner) * len * inner + i % inner;
    float m = -INFINITY;
    for (int64_t k = 0; k < len; ++k) m = fmaxf(m, to_float(x[base + k * inner]));
    float s = 0.0f;
    for (int64_t k = 0; k < len; ++k) s += expf(to_float(x[base + k * inner]) - m);
    const float log_s = logf(s), inv_s = 1.0f / s;
    for (int64_t k = 0; k < len; ++k) {
      const float z = to_float(x[base + k * inner]) - m;
      y[base + k * inner] = cvt<T>(log ? z - log_s : expf(z) * inv_s);
    }
  }
}

// Two passes over the row (mean, then the mean of squared deviations: no cancellation).
template <class T, int G>
__global__ void layer_norm_rows(int64_t rows, int64_t cols, float eps, const T* __restrict__ x,
                                const T* __restrict__ scale, const T* __restrict__ bias, T* __restrict__ y,
                                float* __restrict__ mean_out, float* __restrict__ inv_out) {
  __shared__ float smem[kBlock / 32];
  const int lane = threadIdx.x % G;
  const int64_t groups = static_cast<int64_t>(gridDim.x) * (blockDim.x / G);
  for (int64_t r = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / G; r < rows; r += groups) {
    const T* xr = x + r * cols;
    T* yr = y + r * cols;
    float s = 0.0f;
    for (int64_t k = lane; k < cols; k += G) s += to_float(xr[k]);
    const float mean = group_reduce<G, Red::kSum>(s, smem) / static_cast<float>(cols);
    float q = 0.0f;
    for (int64_t k = lane; k < cols; k += G) {
      const float d = to_float(xr[k]) - mean;
      q += d * d;
    }
    const float inv = rsqrtf(group_reduce<G, Red::kSum>(q, smem) / static_cast<float>(cols) + eps);
    for (int64_t k = lane; k < cols; k += G) {
      const float b = bias != nullptr ? to_float(bias[k]) : 0.0f;
      yr[k] = cvt<T>((to_float(xr[k]) - mean) * inv * to_float(scale[k]) + b);
    }
    if (lane == 0 && mean_out != nullptr) mean_out[r] = mean;
    if (lane == 0 && inv_out != nullptr) inv_out[r] = inv;
  }
}

template <class T>
__global__ void channel_affine(int64_t n, int64_t channels, int64_t inner, const float* __restrict__ a,
                               const float* __restrict__ b, const T* __restrict__ x, T* __restrict__ y) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const int64_t c = (i / inner) % channels;
    y[i] = cvt<T>(fmaf(to_float(x[i]), a[c], b[c]));
  }
}

// Grid for `rows` rows with G threads each.
unsigned row_grid(int64_t rows, int g) { return grid_for(rows * g, kBlock); }

}  // namespace

bool norm_supported(DType t) { return dispatch(t, FloatTypes{}, [](auto) {}); }

void launch_softmax(DType t, bool log, int64_t outer, int64_t len, int64_t inner, const void* x, void* y,
                    cudaStream_t st) {
  if (outer * len * inner == 0) return;
  dispatch(t, FloatTypes{}, [&](auto tag) {
    using T = decltype(tag);
    const T* px = static_cast<const T*>(x);
    T* py = static_cast<T*>(y);
    if (inner != 1) {
      softmax_columns<T><<<grid_for(outer * inner, kBlock), kBlock, 0, st>>>(log, outer, len, inner, px, py);
    } else if (len <= 1024) {
      softmax_rows<T, 32><<<row_grid(outer, 32), kBlock, 0, st>>>(log, outer, len, px, py);
    } else {
      softmax_rows<T, kBlock><<<row_grid(outer, kBlock), kBlock, 0, st>>>(log, outer, len, px, py);
    }
    KILN_CUDA_CHECK_LAUNCH();
  });
}

void launch_layer_norm(DType t, int64_t rows, int64_t cols, float eps, const void* x, const void* scale,
                       const void* bias, void* y, float* mean, float* inv_std, cudaStream_t st) {
  if (rows * cols == 0) return;
  dispatch(t, FloatTypes{}, [&](auto tag) {
    using T = decltype(tag);
    auto args = [&](auto kernel, int g) {
      kernel<<<row_grid(rows, g), kBlock, 0, st>>>(rows, cols, eps, static_cast<const T*>(x),
                                                   static_cast<const T*>(scale), static_cast<const T*>(bias),
                                                   static_cast<T*>(y), mean, inv_std);
    };
    if (cols <= 1024) args(layer_norm_rows<T, 32>, 32);
    else args(layer_norm_rows<T, kBlock>, kBlock);
    KILN_CUDA_CHECK_LAUNCH();
  });
}

void launch_channel_affine(DType t, int64_t n, int64_t channels, int64_t inner, const float* a, const float* b,
                           const void* x, void* y, cudaStream_t st) {
  if (n == 0) return;
  dispatch(t, FloatTypes{}, [&](auto tag) {
    using T = decltype(tag);
    channel_affine<T><<<grid_for(n, kBlock), kBlock, 0, st>>>(n, channels, inner, a, b, static_cast<const T*>(x),
                                                             static_cast<T*>(y));
    KILN_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace kiln::gpu::kern
