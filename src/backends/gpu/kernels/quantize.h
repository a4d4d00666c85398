// QuantizeLinear / DequantizeLinear, per tensor or per axis, int8/uint8 and fp8 e4m3. Scale and
// zero point are read on the device from the layer's inputs.
#pragma once
#include <cstdint>

#include "backends/gpu/vendors/cuda.h"
#include "kiln/dtype.h"

namespace kiln::gpu::kern {

// x viewed as [outer, axis_dim, inner]; the scale index of element i is (i / inner) % axis_dim
// per axis, 0 per tensor (axis_dim = 1).
struct QuantGeometry {
  int64_t n = 0, axis_dim = 1, inner = 1;
};

bool quantize_supported(DType x, DType scale, DType q);
// y = saturate(rint(x / scale) + zp) (integers) or fp8(x / scale) with `saturate`; zp may be null.
void launch_quantize(DType x_t, DType scale_t, DType q_t, const QuantGeometry& g, bool saturate, const void* x,
                     const void* scale, const void* zp, void* y, cudaStream_t stream);

bool dequantize_supported(DType q, DType scale);
// y = (x - zp) * scale in float, y of the scale's type; zp may be null.
void launch_dequantize(DType q_t, DType scale_t, const QuantGeometry& g, const void* x, const void* scale,
                       const void* zp, void* y, cudaStream_t stream);

}  // namespace kiln::gpu::kern
