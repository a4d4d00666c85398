// Reductions (ReduceSum/Mean/Max/Min/Prod/L1/L2/SumSquare over any axes) and ArgMax/ArgMin.
#pragma once
#include <cstdint>

#include "backends/gpu/kernels/broadcast.h"
#include "backends/gpu/vendors/cuda.h"
#include "kiln/dtype.h"

namespace kiln::gpu::kern {

enum class ReduceOp : uint8_t { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kSumSquare };

// Output element o reduces the input elements kept.offsets(o) + red.offsets(j), j < count.
struct ReducePlan {
  ReduceOp op = ReduceOp::kSum;
  int64_t outputs = 0, count = 0;
  Broadcast<1> kept, red;
  bool contiguous = false;  // the reduced elements of an output are adjacent: one warp each
};

bool reduce_supported(DType t);
void launch_reduce(DType t, const ReducePlan& p, const void* x, void* y, cudaStream_t stream);

// ArgMax/ArgMin along the middle of [outer, len, inner]; int64 indices out.
void launch_arg_reduce(DType t, bool is_max, bool last_index, int64_t outer, int64_t len, int64_t inner, const void* x,
                       int64_t* y, cudaStream_t stream);

}  // namespace kiln::gpu::kern
