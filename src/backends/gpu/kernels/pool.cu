// Pooling kernels. Windows: one thread per output element (channels-first) or per V channels
// of an output pixel (channels-last, 16-byte loads across C). Global pools of channels-first
// input: one warp per plane.
#include "backends/gpu/check.h"
#include "backends/gpu/kernels/device_types.cuh"
#include "backends/gpu/kernels/pool.h"

namespace kiln::gpu::kern {
namespace {

// Folds V lanes of window taps; the max keeps its first tap unless a later one is greater
// (NaN never replaces, as on the CPU); an empty window gives 0.
template <int V>
struct Acc {
  float v[V];
  int valid = 0, padded = 0;
};

template <class T, int V>
__device__ __forceinline__ void pool_window(const PoolParams& p, const T* __restrict__ x, int64_t base,
                                            int64_t tap_stride, const int (&o)[3], Acc<V>& acc) {
  const bool is_max = p.mode == PoolMode::kMax;
  for (int k = 0; k < V; ++k) acc.v[k] = 0.0f;
  for (int kd = 0; kd < p.kernel[0]; ++kd) {
    const int cd = o[0] * p.stride[0] - p.pad_begin[0] + kd * p.dilation[0];
    const bool pad_d = cd >= -p.pad_begin[0] && cd < p.in[0] + p.pad_end[0];
    for (int kh = 0; kh < p.kernel[1]; ++kh) {
      const int ch = o[1] * p.stride[1] - p.pad_begin[1] + kh * p.dilation[1];
      const bool pad_h = ch >= -p.pad_begin[1] && ch < p.in[1] + p.pad_end[1];
      for (int kw = 0; kw < p.kernel[2]; ++kw) {
        const int cw = o[2] * p.stride[2] - p.pad_begin[2] + kw * p.dilation[2];
        const bool pad_w = cw >= -p.pad_begin[2] && cw < p.in[2] + p.pad_end[2];
        acc.padded += pad_d && pad_h && pad_w;
        if (cd < 0 || cd >= p.in[0] || ch < 0 || ch >= p.in[1] || cw < 0 || cw >= p.in[2]) continue;
        const int64_t off = base + ((static_cast<int64_t>(cd) * p.in[1] + ch) * p.in[2] + cw) * tap_stride;
        Vec<T, V> t = *reinterpret_cast<const Vec<T, V>*>(x + off);
#pragma unroll
        for (int k = 0; k < V; ++k) {
          const float f = to_float(t.v[k]);
          if (!is_max) acc.v[k] += f;
          else if (acc.valid == 0 || f > acc.v[k]) acc.v[k] = f;
        }
        ++acc.valid;
      }
    }
  }
  if (!is_max) {
    const int count = p.count_include_pad ? acc.padded : acc.valid;
    for (int k = 0; k < V; ++k) acc.v[k] = count == 0 ? 0.0f : acc.v[k] / static_cast<float>(count);
  }
}

template <class T, int V>
__global__ void pool_kernel(PoolParams p, const T* __restrict__ x, T* __restrict__ y, int64_t n) {
  const int64_t out_sp = static_cast<int64_t>(p.out[0]) * p.out[1] * p.out[2];
  const int64_t in_sp = static_cast<int64_t>(p.in[0]) * p.in[1] * p.in[2];
  const int64_t cv = p.channels / V;  // channel groups (channels-last), V == 1 otherwise
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    int64_t s, base, tap_stride, out_off;
    if (p.channels_last) {  // i = ((b * out_sp) + s) * cv + g
      const int64_t g = i % cv;
      const int64_t bs = i / cv;
      s = bs % out_sp;
      const int64_t b = bs / out_sp;
      base = b * in_sp * p.channels + g * V;
      tap_stride = p.channels;
      out_off = bs * p.channels + g * V;
    } else {  // i = plane * out_sp + s
      s = i % out_sp;
      base = (i / out_sp) * in_sp;
      tap_stride = 1;
      out_off = i;
    }
    const int o[3] = {static_cast<int>(s / (p.out[1] * p.out[2])), static_cast<int>((s / p.out[2]) % p.out[1]),
                      static_cast<int>(s % p.out[2])};
    Acc<V> acc;
    pool_window<T, V>(p, x, base, tap_stride, o, acc);
    Vec<T, V> r;
#pragma unroll
    for (int k = 0; k < V; ++k) r.v[k] = cvt<T>(acc.v[k]);
    *reinterpret_cast<Vec<T, V>*>(y + out_off) = r;
  }
}

template <class T>
__global__ void global_pool_kernel(PoolMode mode, int64_t planes, int64_t plane, const T* __restrict__ x,
                                   T* __restrict__ y) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x / 32);
  for (int64_t w = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32; w < planes; w += warps) {
    const T* src = x + w * plane;
    const bool is_max = mode == PoolMode::kMax;
    float acc = is_max ? -INFINITY : 0.0f;
    for (int64_t k = lane; k < plane; k += 32) {
      const float f = to_float(src[k]);
      acc = is_max ? fmaxf(acc, f) : acc + f;
    }
    for (int d = 16; d > 0; d /= 2) {
      const float other = __shfl_xor_sync(0xffffffffu, acc, d);
      acc = is_max ? fmaxf(acc, other) : acc + other;
    }
    if (lane == 0) {
      float r = is_max ? acc : acc / static_cast<float>(plane);
      if (plane == 0) r = 0.0f;
      y[w] = cvt<T>(r);
    }
  }
}


constexpr int kNhwcRows = 32;  // threads along the plane per block (x 32 channels)

template <class T>
__global__ void global_pool_nhwc_kernel(PoolMode mode, int64_t plane, int64_t channels, const T* __restrict__ x,
                                        T* __restrict__ y) {
  __shared__ float partial[kNhwcRows][33];
  const int64_t c = static_cast<int64_t>(blockIdx.x) * 32 + threadIdx.x;
  const int64_t b = blockIdx.y;
  const bool is_max = mode == PoolMode::kMax;
  float acc = is_max ? -INFINITY : 0.0f;
  if (c < channels) {
    const T* src = x + b * plane * channels + c;
    for (int64_t s = threadIdx.y; s < plane; s += kNhwcRows) {
      const float f = to_float(src[s * channels]);
      acc = is_max ? fmaxf(acc, f) : acc + f;
    }
  }
  partial[threadIdx.y][threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.y == 0 && c < channels) {
    float r = partial[0][threadIdx.x];
    for (int k = 1; k < kNhwcRows; ++k) r = is_max ? fmaxf(r, partial[k][threadIdx.x]) : r + partial[k][threadIdx.x];
    if (!is_max) r = plane == 0 ? 0.0f : r / static_cast<float>(plane);
    y[b * channels + c] = cvt<T>(r);
  }
}

}  // namespace

bool pool_supported(DType t) { return dispatch(t, FloatTypes{}, [](auto) {}); }

void launch_pool(DType t, const PoolParams& p, const void* x, void* y, cudaStream_t st) {
  const int64_t n = p.batch * p.channels * p.out[0] * p.out[1] * p.out[2];
  if (n == 0) return;
  constexpr int kThreads = 256;
  dispatch(t, FloatTypes{}, [&](auto tag) {
    using T = decltype(tag);
    constexpr int V = 16 / sizeof(T);
    const T* px = static_cast<const T*>(x);
    T* py = static_cast<T*>(y);
    if (p.channels_last && p.channels % V == 0 && aligned(x, 16) && aligned(y, 16)) {
      pool_kernel<T, V><<<grid_for(n / V, kThreads), kThreads, 0, st>>>(p, px, py, n / V);
    } else {
      pool_kernel<T, 1><<<grid_for(n, kThreads), kThreads, 0, st>>>(p, px, py, n);
    }
    KILN_CUDA_CHECK_LAUNCH();
  });
}

void launch_global_pool(DType t, PoolMode mode, int64_t planes, int64_t plane, const void* x, void* y,
                        cudaStream_t st) {
  if (planes == 0) return;
  constexpr int kThreads = 256;
  dispatch(t, FloatTypes{}, [&](auto tag) {
    using T = decltype(tag);
    global_pool_kernel<T><<<grid_for(planes * 32, kThreads), kThreads, 0, st>>>(
        mode, planes, plane, static_cast<const T*>(x), static_cast<T*>(y));
    KILN_CUDA_CHECK_LAUNCH();
  });
}

void launch_global_pool_nhwc(DType t, PoolMode mode, int64_t batch, int64_t plane, int64_t channels, const void* x,
                             void* y, cudaStream_t st) {
  if (batch == 0 || channels == 0) return;
  dispatch(t, FloatTypes{}, [&](auto tag) {
    using T = decltype(tag);
    const dim3 grid(static_cast<unsigned>((channels + 31) / 32), static_cast<unsigned>(batch));
    global_pool_nhwc_kernel<T><<<grid, dim3(32, kNhwcRows), 0, st>>>(mode, plane, channels,
                                                                      static_cast<const T*>(x), static_cast<T*>(y));
    KILN_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace kiln::gpu::kern
