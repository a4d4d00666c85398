// Normalization kernels: Softmax / LogSoftmax over [outer, len, inner], LayerNormalization
// over rows, and inference BatchNormalization as a per-channel affine map.
#pragma once
#include <cstdint>

#include "backends/gpu/vendors/cuda.h"
#include "kiln/dtype.h"

namespace kiln::gpu::kern {

bool norm_supported(DType t);  // float32, float16, bfloat16

void launch_softmax(DType t, bool log, int64_t outer, int64_t len, int64_t inner, const void* x, void* y,
                    cudaStream_t stream);

// y = (x - mean) * inv_std * scale + bias per row of `cols`; scale/bias have `cols` elements of
// dtype t (bias may be null); mean/inv_std (float32, `rows` each) are written when non-null.
void launch_layer_norm(DType t, int64_t rows, int64_t cols, float eps, const void* x, const void* scale,
                       const void* bias, void* y, float* mean, float* inv_std, cudaStream_t stream);

// y = x * a[c] + b[c] with c = (i / inner) % channels; a, b float32 on the device.
void launch_channel_affine(DType t, int64_t n, int64_t channels, int64_t inner, const float* a, const float* b,
                           const void* x, void* y, cudaStream_t stream);

}  // namespace kiln::gpu::kern
