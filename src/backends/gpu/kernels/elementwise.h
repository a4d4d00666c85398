// Launchers of the elementwise kernels (elementwise_unary.cu, elementwise_binary.cu). Layers
// compute an EwShape at build time and call these from enqueue: one launch each.
#pragma once
#include <cstdint>

#include "backends/gpu/kernels/broadcast.h"
#include "backends/gpu/kernels/ew_ops.h"
#include "backends/gpu/vendors/cuda.h"
#include "kiln/dtype.h"

namespace kiln::gpu::kern {

// How the operands of an elementwise op map to its n output elements.
struct EwShape {
  int64_t n = 0;
  // Contiguous case: every operand is either output-shaped or a single element.
  bool contiguous = true;
  bool a_scalar = false, b_scalar = false;
  Broadcast<2> bc;  // otherwise (per-dimension strides)
};

// Builds the shape of a binary op (b's shape ignored for unary: pass {}).
bool make_ew_shape(const std::vector<int64_t>& out, const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                   EwShape* s);

// Whether `op` has a kernel for operands of dtype t.
bool ew_supported(EwOp op, DType t);
// y = op(a[, b]); b is ignored by unary ops. Outputs are bool for comparisons, else dtype t.
void launch_ew(EwOp op, DType t, const void* a, const void* b, void* y, const EwShape& s, const EwParams& p,
               cudaStream_t stream);

bool cast_supported(DType from, DType to);
void launch_cast(DType from, DType to, const void* x, void* y, int64_t n, cudaStream_t stream);

bool where_supported(DType t);
void launch_where(DType t, const void* cond, const void* x, const void* y, void* out, int64_t n,
                  const Broadcast<3>& bc, cudaStream_t stream);

// Plain device-to-device copy of `bytes` on the stream (aliasing layers, Identity).
void launch_copy(const void* src, void* dst, size_t bytes, cudaStream_t stream);

}  // namespace kiln::gpu::kern
