// Quantization kernels. The quotient x / scale is formed in the scale's type (float, or float
// rounded to fp16/bf16), as ONNX prescribes and the CPU reference does.
#include "backends/gpu/check.h"
#include "backends/gpu/kernels/device_types.cuh"
#include "backends/gpu/kernels/quantize.h"

namespace kiln::gpu::kern {
namespace {

constexpr int kThreads = 256;
using QTypes = Types<int8_t, uint8_t, fp8e4m3>;
using DqTypes = Types<int8_t, uint8_t, int32_t, fp8e4m3>;

// Rounds a float to S's precision and back (identity for float).
template <class S>
__device__ __forceinline__ float in_precision(float v) {
  return to_float(cvt<S>(v));
}

template <class X, class S, class Q>
__global__ void quantize_kernel(QuantGeometry g, bool saturate, const X* __restrict__ x, const S* __restrict__ scale,
                                const Q* __restrict__ zp, Q* __restrict__ y) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < g.n; i += stride) {
    const int64_t si = (i / g.inner) % g.axis_dim;
    const float q = in_precision<S>(in_precision<S>(to_float(x[i])) / to_float(scale[si]));
    if constexpr (std::is_same_v<Q, fp8e4m3>) {
      Q r;
      r.__x = __nv_cvt_float_to_fp8(q, saturate ? __NV_SATFINITE : __NV_NOSAT, __NV_E4M3);
      y[i] = r;
    } else {
      const float z = zp != nullptr ? static_cast<float>(zp[si]) : 0.0f;
      const float v = rintf(q) + z;  // ties to even
      constexpr float lo = std::is_signed_v<Q> ? -128.0f : 0.0f, hi = std::is_signed_v<Q> ? 127.0f : 255.0f;
      y[i] = static_cast<Q>(v < lo ? lo : (v > hi ? hi : v));  // NaN: the comparisons fail, cast gives 0
    }
  }
}

template <class X, class S>
__global__ void dequantize_kernel(QuantGeometry g, const X* __restrict__ x, const S* __restrict__ scale,
                                  const X* __restrict__ zp, S* __restrict__ y) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < g.n; i += stride) {
    const int64_t si = (i / g.inner) % g.axis_dim;
    const float z = zp != nullptr ? to_float(zp[si]) : 0.0f;
    y[i] = cvt<S>((to_float(x[i]) - z) * to_float(scale[si]));
  }
}

}  // namespace

bool quantize_supported(DType x, DType scale, DType q) {
  return dispatch(x, FloatTypes{}, [](auto) {}) && dispatch(scale, FloatTypes{}, [](auto) {}) &&
         dispatch(q, QTypes{}, [](auto) {});
}

void launch_quantize(DType x_t, DType scale_t, DType q_t, const QuantGeometry& g, bool saturate, const void* x,
                     const void* scale, const void* zp, void* y, cudaStream_t st) {
  if (g.n == 0) return;
  dispatch(x_t, FloatTypes{}, [&](auto xv) {
    dispatch(scale_t, FloatTypes{}, [&](auto sv) {
      dispatch(q_t, QTypes{}, [&](auto qv) {
        using X = decltype(xv);
        using S = decltype(sv);
        using Q = decltype(qv);
        quantize_kernel<X, S, Q><<<grid_for(g.n, kThreads), kThreads, 0, st>>>(
            g, saturate, static_cast<const X*>(x), static_cast<const S*>(scale), static_cast<const Q*>(zp),
            static_cast<Q*>(y));
        KILN_CUDA_CHECK_LAUNCH();
      });
    });
  });
}

bool dequantize_supported(DType q, DType scale) {
  return dispatch(q, DqTypes{}, [](auto) {}) && dispatch(scale, FloatTypes{}, [](auto) {});
}

void launch_dequantize(DType q_t, DType scale_t, const QuantGeometry& g, const void* x, const void* scale,
                       const void* zp, void* y, cudaStream_t st) {
  if (g.n == 0) return;
  dispatch(q_t, DqTypes{}, [&](auto xv) {
    dispatch(scale_t, FloatTypes{}, [&](auto sv) {
      using X = decltype(xv);
      using S = decltype(sv);
      dequantize_kernel<X, S><<<grid_for(g.n, kThreads), kThreads, 0, st>>>(
          g, static_cast<const X*>(x), static_cast<const S*>(scale), static_cast<const X*>(zp), static_cast<S*>(y));
      KILN_CUDA_CHECK_LAUNCH();
    });
  });
}

}  // namespace kiln::gpu::kern
