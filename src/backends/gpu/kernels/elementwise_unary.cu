// One-input elementwise ops and Cast: instances of the contiguous kernel per op and dtype.
#include "backends/gpu/kernels/elementwise_kernels.cuh"

namespace kiln::gpu::kern {

bool ew_unary(EwOp op, DType t, bool launch, const void* a, void* y, const EwShape& s, const EwParams& p,
              cudaStream_t st) {
  switch (op) {
#define KILN_CASE(name, list) \
  case EwOp::k##name: return run_ew<EwOp::k##name, false>(t, list{}, launch, a, nullptr, y, s, p, st);
#define KILN_FLOAT(name) KILN_CASE(name, FloatTypes)
#define KILN_NUM(name) KILN_CASE(name, NumTypes)
#define KILN_BOOL(name) KILN_CASE(name, BoolTypes)
    KILN_EW_FLOAT_UNARY(KILN_FLOAT)
    KILN_EW_NUM_UNARY(KILN_NUM)
    KILN_EW_BOOL_UNARY(KILN_BOOL)
#undef KILN_FLOAT
#undef KILN_NUM
#undef KILN_BOOL
#undef KILN_CASE
    default: return false;
  }
}

namespace {
using CastTypes = Types<float, half, bf16, double, int8_t, uint8_t, int32_t, int64_t, bool>;

template <class From, class To>
void cast_typed(const void* x, void* y, int64_t n, cudaStream_t st) {
  EwShape s;
  s.n = n;
  launch_ew_typed<EwOp::kIdentity, From, To, false, false>(x, nullptr, y, s, EwParams{}, st);
}

template <class F>
bool dispatch_cast(DType from, DType to, F&& f) {
  return dispatch(from, CastTypes{}, [&](auto a) {
    dispatch(to, CastTypes{}, [&](auto b) { f(a, b); });
  }) && dispatch(to, CastTypes{}, [](auto) {});
}
}  // namespace

bool cast_supported(DType from, DType to) {
  return dispatch_cast(from, to, [](auto, auto) {});
}

void launch_cast(DType from, DType to, const void* x, void* y, int64_t n, cudaStream_t st) {
  dispatch_cast(from, to, [&](auto a, auto b) { cast_typed<decltype(a), decltype(b)>(x, y, n, st); });
}

void launch_copy(const void* src, void* dst, size_t bytes, cudaStream_t st) {
  if (bytes == 0 || src == dst) return;
  KILN_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, st));
}

}  // namespace kiln::gpu::kern
