// The epilogue kiln applies after a vendor convolution or matmul when the library cannot fuse
// it: y = act(y + bias[channel] + z), in place, computed in float. One small kernel for every
// activation of ops/activation.h (the codes below are ActivationKind's values). Included by
// the .cu file, so it stays plain C++17.
#pragma once
#include <cstdint>

#include "backends/gpu/vendors/cuda.h"

namespace kiln::gpu {

enum class EpilogueType { kFloat32, kFloat16, kBFloat16 };

struct EpilogueParams {
  int activation = 0;  // static_cast<int>(ops::ActivationKind)
  float p0 = 0, p1 = 0;
  int64_t n = 0;         // elements of y
  int64_t channels = 1;  // bias length
  int64_t inner = 1;     // elements per channel step: H*W for NCHW, 1 for NHWC / row-major [M, N]
};

// bias (length `channels`, y's type) and z (y's shape and type) may be null.
void launch_epilogue(EpilogueType t, const EpilogueParams& p, void* y, const void* bias, const void* z,
                     cudaStream_t stream);

}  // namespace kiln::gpu
