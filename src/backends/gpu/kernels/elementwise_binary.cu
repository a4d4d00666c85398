// Two-input elementwise ops (arithmetic, comparisons, logic) and Where, plus the entry points
// that route an op code to the unary or binary instances.
#include "backends/gpu/kernels/elementwise_kernels.cuh"

namespace kiln::gpu::kern {

bool ew_binary(EwOp op, DType t, bool launch, const void* a, const void* b, void* y, const EwShape& s,
               const EwParams& p, cudaStream_t st) {
  switch (op) {
#define KILN_CASE(name, list) \
  case EwOp::k##name: return run_ew<EwOp::k##name, true>(t, list{}, launch, a, b, y, s, p, st);
#define KILN_FLOAT(name) KILN_CASE(name, FloatTypes)
#define KILN_NUM(name) KILN_CASE(name, NumTypes)
#define KILN_BOOL(name) KILN_CASE(name, BoolTypes)
    KILN_EW_FLOAT_BINARY(KILN_FLOAT)
    KILN_EW_NUM_BINARY(KILN_NUM)
    KILN_EW_COMPARE(KILN_NUM)
    KILN_EW_BOOL_BINARY(KILN_BOOL)
#undef KILN_FLOAT
#undef KILN_NUM
#undef KILN_BOOL
#undef KILN_CASE
    default: return false;
  }
}

bool ew_supported(EwOp op, DType t) {
  const EwShape s;
  return ew_unary(op, t, false, nullptr, nullptr, s, {}, nullptr) ||
         ew_binary(op, t, false, nullptr, nullptr, nullptr, s, {}, nullptr);
}

void launch_ew(EwOp op, DType t, const void* a, const void* b, void* y, const EwShape& s, const EwParams& p,
               cudaStream_t st) {
  if (!ew_unary(op, t, true, a, y, s, p, st)) ew_binary(op, t, true, a, b, y, s, p, st);
}

namespace {
template <class T>
__global__ void where_kernel(const bool* __restrict__ c, const T* __restrict__ x, const T* __restrict__ y,
                             T* __restrict__ out, int64_t n, Broadcast<3> bc) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    int64_t off[3];
    bc.offsets(i, off);
    out[i] = c[off[0]] ? x[off[1]] : y[off[2]];
  }
}
}  // namespace

bool where_supported(DType t) { return dispatch(t, AnyTypes{}, [](auto) {}); }

void launch_where(DType t, const void* cond, const void* x, const void* y, void* out, int64_t n,
                  const Broadcast<3>& bc, cudaStream_t st) {
  if (n == 0) return;
  dispatch(t, AnyTypes{}, [&](auto tag) {
    using T = decltype(tag);
    where_kernel<T><<<grid_for(n, kEwThreads), kEwThreads, 0, st>>>(
        static_cast<const bool*>(cond), static_cast<const T*>(x), static_cast<const T*>(y), static_cast<T*>(out), n, bc);
    KILN_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace kiln::gpu::kern
