// Pooling kernels: MaxPool / AveragePool windows (up to 3 spatial dims, NCHW or channels-last)
// and the global pools. Layers resolve the window on the host (ops::resolve_window, as the CPU
// does) into PoolParams; enqueue is one launch.
#pragma once
#include <cstdint>

#include "backends/gpu/vendors/cuda.h"
#include "kiln/dtype.h"

namespace kiln::gpu::kern {

enum class PoolMode : uint8_t { kMax, kAverage };

// Spatial dims are right-aligned into 3 (unused leading ones have size 1, kernel 1).
struct PoolParams {
  PoolMode mode = PoolMode::kMax;
  bool count_include_pad = false;
  bool channels_last = false;  // (N, D, H, W, C) instead of (N, C, D, H, W)
  int64_t batch = 1, channels = 1;
  int in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, kernel[3] = {1, 1, 1}, stride[3] = {1, 1, 1}, dilation[3] = {1, 1, 1};
  int pad_begin[3] = {0, 0, 0}, pad_end[3] = {0, 0, 0};
};

bool pool_supported(DType t);
void launch_pool(DType t, const PoolParams& p, const void* x, void* y, cudaStream_t stream);
// Global pools of channels-first input: `planes` = N*C planes of `plane` elements each.
void launch_global_pool(DType t, PoolMode mode, int64_t planes, int64_t plane, const void* x, void* y,
                        cudaStream_t stream);
// Channels-last global pooling of x [batch, plane, channels] -> y [batch, channels]: a block
// per (batch, 32 channels), its 32 rows of threads splitting the plane and reducing in shared
// memory, so a few channels over a large image still spread over 1024 threads (one thread
// per channel walked 25,600 pixels alone: 6 ms on PP-OCR det).
void launch_global_pool_nhwc(DType t, PoolMode mode, int64_t batch, int64_t plane, int64_t channels, const void* x,
                             void* y, cudaStream_t stream);

}  // namespace kiln::gpu::kern
