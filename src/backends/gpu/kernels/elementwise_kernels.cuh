// The elementwise kernel templates: a contiguous kernel with 16-byte vector accesses (operands
// output-shaped or scalar) and a per-dimension-stride kernel for general broadcasting. Included
// by the .cu files that instantiate them per op and dtype.
#pragma once
#include "backends/gpu/check.h"
#include "backends/gpu/kernels/elementwise.h"
#include "backends/gpu/kernels/ew_ops.cuh"

namespace kiln::gpu::kern {

// Comparisons write bool; every other op writes its input type. Spelled out, not deduced from
// ew_apply: nvcc's host pass sees a __device__ function as returning void, so a decltype of
// ew_apply made the host launch ew_contiguous<Equal, float, float> while the device had compiled
// only <Equal, float, bool> ("invalid device function" at launch).
constexpr bool ew_writes_bool(EwOp op) {
#define KILN_IS(name) op == EwOp::k##name ||
  return KILN_EW_COMPARE(KILN_IS) false;
#undef KILN_IS
}
template <EwOp OP, class T>
using ew_out_t = std::conditional_t<ew_writes_bool(OP), bool, T>;

// Device side only (where ew_apply has its real type): ew_writes_bool agrees with ew_apply.
template <EwOp OP, class T>
__device__ __forceinline__ void ew_check_out() {
  using C = compute_t<T>;
  constexpr bool yields_bool = std::is_same_v<decltype(ew_apply<OP>(C{}, C{}, EwParams{})), bool>;
  static_assert(!ew_writes_bool(OP) || yields_bool, "ew_writes_bool lists an op that does not yield bool");
  static_assert(!yields_bool || std::is_same_v<C, bool> || ew_writes_bool(OP), "an op yields bool: add it to ew_writes_bool");
}

// V elements per thread per step (one 16-byte access of T when V = 16 / sizeof(T)); a scalar
// operand is read once. The tail past the last whole vector is done one element at a time.
template <EwOp OP, class T, class Out, int V>
__global__ void ew_contiguous(const T* __restrict__ a, const T* __restrict__ b, Out* __restrict__ y, int64_t n,
                              bool a_scalar, bool b_scalar, EwParams p) {
  ew_check_out<OP, T>();
  using C = compute_t<T>;
  const C sa = a_scalar ? cvt<C>(a[0]) : C();
  const C sb = b_scalar ? cvt<C>(b[0]) : C();
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t nv = n / V;
  for (int64_t i = first; i < nv; i += stride) {
    Vec<T, V> va, vb;
    Vec<Out, V> vy;
    if (!a_scalar) va = reinterpret_cast<const Vec<T, V>*>(a)[i];
    if (!b_scalar) vb = reinterpret_cast<const Vec<T, V>*>(b)[i];
#pragma unroll
    for (int k = 0; k < V; ++k) {
      const C x = a_scalar ? sa : cvt<C>(va.v[k]);
      const C z = b_scalar ? sb : cvt<C>(vb.v[k]);
      vy.v[k] = cvt<Out>(ew_apply<OP>(x, z, p));
    }
    reinterpret_cast<Vec<Out, V>*>(y)[i] = vy;
  }
  for (int64_t i = nv * V + first; i < n; i += stride) {
    const C x = a_scalar ? sa : cvt<C>(a[i]);
    const C z = b_scalar ? sb : cvt<C>(b[i]);
    y[i] = cvt<Out>(ew_apply<OP>(x, z, p));
  }
}

template <EwOp OP, class T, class Out>
__global__ void ew_broadcast(const T* __restrict__ a, const T* __restrict__ b, Out* __restrict__ y, int64_t n,
                             Broadcast<2> bc, EwParams p) {
  ew_check_out<OP, T>();
  using C = compute_t<T>;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    int64_t off[2];
    bc.offsets(i, off);
    y[i] = cvt<Out>(ew_apply<OP>(cvt<C>(a[off[0]]), cvt<C>(b[off[1]]), p));
  }
}

constexpr int kEwThreads = 256;

// Picks the kernel for the shape and the pointers' alignment, and launches it. kVector false
// compiles only the one-element-per-step kernel (Cast: 81 type pairs, rarely hot).
template <EwOp OP, class T, class Out, bool kBinary, bool kVector = true>
void launch_ew_typed(const void* a, const void* b, void* y, const EwShape& s, const EwParams& p, cudaStream_t st) {
  if (s.n == 0) return;
  const T* pa = static_cast<const T*>(a);
  const T* pb = static_cast<const T*>(kBinary ? b : a);
  Out* py = static_cast<Out*>(y);
  const bool b_scalar = kBinary ? s.b_scalar : true;
  if constexpr (kBinary) {
    if (!s.contiguous) {
      ew_broadcast<OP, T, Out><<<grid_for(s.n, kEwThreads), kEwThreads, 0, st>>>(pa, pb, py, s.n, s.bc, p);
      KILN_CUDA_CHECK_LAUNCH();
      return;
    }
  }
  if constexpr (kVector) {
    constexpr int V = 16 / sizeof(T) > 0 ? 16 / sizeof(T) : 1;
    if (aligned(pa, alignof(Vec<T, V>)) && aligned(pb, alignof(Vec<T, V>)) && aligned(py, alignof(Vec<Out, V>)) &&
        s.n >= V) {
      ew_contiguous<OP, T, Out, V>
          <<<grid_for(s.n / V, kEwThreads), kEwThreads, 0, st>>>(pa, pb, py, s.n, s.a_scalar, b_scalar, p);
      KILN_CUDA_CHECK_LAUNCH();
      return;
    }
  }
  ew_contiguous<OP, T, Out, 1><<<grid_for(s.n, kEwThreads), kEwThreads, 0, st>>>(pa, pb, py, s.n, s.a_scalar,
                                                                                   b_scalar, p);
  KILN_CUDA_CHECK_LAUNCH();
}

// Launches OP for dtype t if t is in List (or only checks, when `launch` is false).
template <EwOp OP, bool kBinary, class List>
bool run_ew(DType t, List list, bool launch, const void* a, const void* b, void* y, const EwShape& s,
            const EwParams& p, cudaStream_t st) {
  return dispatch(t, list, [&](auto tag) {
    using T = decltype(tag);
    if (launch) launch_ew_typed<OP, T, ew_out_t<OP, T>, kBinary>(a, b, y, s, p, st);
  });
}

// Each .cu file instantiates its share of the ops through one of these (elementwise_*.cu).
bool ew_unary(EwOp op, DType t, bool launch, const void* a, void* y, const EwShape& s, const EwParams& p,
              cudaStream_t st);
bool ew_binary(EwOp op, DType t, bool launch, const void* a, const void* b, void* y, const EwShape& s,
               const EwParams& p, cudaStream_t st);

}  // namespace kiln::gpu::kern
