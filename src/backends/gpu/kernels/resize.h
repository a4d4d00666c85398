// Resize with linear/cubic interpolation (nearest reuses the Pad kernel's per-axis tables).
// Taps come from ops::resize_axis_taps, the CPU kernel's own coordinate logic.
#pragma once
#include <cstdint>

#include "backends/gpu/kernels/broadcast.h"
#include "backends/gpu/vendors/cuda.h"
#include "kiln/dtype.h"

namespace kiln::gpu::kern {

struct ResizeTapDev {
  int64_t offset;  // input element offset along the axis (index * stride); -1: outside the crop
  float weight;
};

// Axis d has taps[d] slots per output coordinate, stored from table_start[d] (coordinate-major).
struct ResizePlan {
  int rank = 0;
  int64_t dims[kMaxDims] = {};
  int64_t table_start[kMaxDims] = {};
  int taps[kMaxDims] = {};
  float extrapolation = 0;
};

bool resize_supported(DType t);
void launch_resize_interp(DType t, const ResizePlan& p, const ResizeTapDev* tables, const void* x, void* y, int64_t n,
                          cudaStream_t stream);

}  // namespace kiln::gpu::kern
