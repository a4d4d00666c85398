// Interpolating Resize: per output element, the weighted sum over the product of each axis's
// taps (axes that keep their size have one tap of weight 1).
#include "backends/gpu/check.h"
#include "backends/gpu/kernels/device_types.cuh"
#include "backends/gpu/kernels/resize.h"

namespace kiln::gpu::kern {
namespace {

template <class T>
__global__ void resize_interp(ResizePlan p, const ResizeTapDev* __restrict__ tables, const T* __restrict__ x,
                              T* __restrict__ y, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const ResizeTapDev* row[kMaxDims];
    int64_t rest = i, combos = 1;
    bool outside = false;
    for (int d = p.rank - 1; d >= 0; --d) {
      const int64_t c = rest % p.dims[d];
      rest /= p.dims[d];
      row[d] = tables + p.table_start[d] + c * p.taps[d];
      outside = outside || row[d][0].offset < 0;
      combos *= p.taps[d];
    }
    float acc = 0.0f;
    if (!outside) {
      for (int64_t k = 0; k < combos; ++k) {
        int64_t kr = k, off = 0;
        float w = 1.0f;
        for (int d = p.rank - 1; d >= 0; --d) {
          const ResizeTapDev& t = row[d][kr % p.taps[d]];
          kr /= p.taps[d];
          off += t.offset;
          w *= t.weight;
        }
        if (w != 0.0f) acc += w * to_float(x[off]);
      }
    }
    y[i] = cvt<T>(outside ? p.extrapolation : acc);
  }
}

}  // namespace

bool resize_supported(DType t) { return dispatch(t, FloatTypes{}, [](auto) {}); }

void launch_resize_interp(DType t, const ResizePlan& p, const ResizeTapDev* tables, const void* x, void* y, int64_t n,
                          cudaStream_t st) {
  if (n == 0) return;
  constexpr int kThreads = 256;
  dispatch(t, FloatTypes{}, [&](auto tag) {
    using T = decltype(tag);
    resize_interp<T><<<grid_for(n, kThreads), kThreads, 0, st>>>(p, tables, static_cast<const T*>(x),
                                                                 static_cast<T*>(y), n);
    KILN_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace kiln::gpu::kern
