// Reduction kernels: one warp per output when its reduced elements are contiguous (coalesced
// lanes), one thread per output otherwise (neighbouring outputs read neighbouring elements).
// Accumulation is in float.
#include "backends/gpu/check.h"
#include "backends/gpu/kernels/device_types.cuh"
#include "backends/gpu/kernels/reduce.h"

namespace kiln::gpu::kern {
namespace {

constexpr int kThreads = 256;

__device__ __forceinline__ float identity(ReduceOp op) {
  switch (op) {
    case ReduceOp::kMax: return -INFINITY;
    case ReduceOp::kMin: return INFINITY;
    case ReduceOp::kProd: return 1.0f;
    default: return 0.0f;
  }
}

// Folds one input value into the accumulator.
__device__ __forceinline__ float fold(ReduceOp op, float acc, float v) {
  switch (op) {
    case ReduceOp::kMax: return fmaxf(acc, v);
    case ReduceOp::kMin: return fminf(acc, v);
    case ReduceOp::kProd: return acc * v;
    case ReduceOp::kL1: return acc + fabsf(v);
    case ReduceOp::kL2:
    case ReduceOp::kSumSquare: return acc + v * v;
    default: return acc + v;
  }
}

// Combines two partial accumulators.
__device__ __forceinline__ float merge(ReduceOp op, float a, float b) {
  switch (op) {
    case ReduceOp::kMax: return fmaxf(a, b);
    case ReduceOp::kMin: return fminf(a, b);
    case ReduceOp::kProd: return a * b;
    default: return a + b;
  }
}

__device__ __forceinline__ float finish(ReduceOp op, float acc, int64_t count) {
  if (op == ReduceOp::kMean) return acc / static_cast<float>(count);
  if (op == ReduceOp::kL2) return sqrtf(acc);
  return acc;
}

template <class T>
__global__ void reduce_warp(ReducePlan p, const T* __restrict__ x, T* __restrict__ y) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x / 32);
  for (int64_t o = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32; o < p.outputs; o += warps) {
    int64_t base[1];
    p.kept.offsets(o, base);
    float acc = identity(p.op);
    for (int64_t j = lane; j < p.count; j += 32) acc = fold(p.op, acc, to_float(x[base[0] + j]));
    for (int d = 16; d > 0; d /= 2) acc = merge(p.op, acc, __shfl_xor_sync(0xffffffffu, acc, d));
    if (lane == 0) y[o] = cvt<T>(finish(p.op, acc, p.count));
  }
}

template <class T>
__global__ void reduce_thread(ReducePlan p, const T* __restrict__ x, T* __restrict__ y) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t o = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; o < p.outputs; o += stride) {
    int64_t base[1];
    p.kept.offsets(o, base);
    float acc = identity(p.op);
    for (int64_t j = 0; j < p.count; ++j) {
      int64_t off[1];
      p.red.offsets(j, off);
      acc = fold(p.op, acc, to_float(x[base[0] + off[0]]));
    }
    y[o] = cvt<T>(finish(p.op, acc, p.count));
  }
}

// The first extreme wins (the last with last_index), like the CPU reference.
template <class T>
__global__ void arg_reduce(bool is_max, bool last, int64_t outer, int64_t len, int64_t inner, const T* __restrict__ x,
                           int64_t* __restrict__ y) {
  const int64_t n = outer * inner;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const T* src = x + (i / inner) * len * inner + i % inner;
    float best = to_float(src[0]);
    int64_t at = 0;
    for (int64_t k = 1; k < len; ++k) {
      const float v = to_float(src[k * inner]);
      const bool better = is_max ? (last ? v >= best : v > best) : (last ? v <= best : v < best);
      if (better) {
        best = v;
        at = k;
      }
    }
    y[i] = at;
  }
}

}  // namespace

bool reduce_supported(DType t) { return dispatch(t, FloatTypes{}, [](auto) {}); }

void launch_reduce(DType t, const ReducePlan& p, const void* x, void* y, cudaStream_t st) {
  if (p.outputs == 0) return;
  dispatch(t, FloatTypes{}, [&](auto tag) {
    using T = decltype(tag);
    if (p.contiguous) {
      reduce_warp<T><<<grid_for(p.outputs * 32, kThreads), kThreads, 0, st>>>(p, static_cast<const T*>(x),
                                                                              static_cast<T*>(y));
    } else {
      reduce_thread<T><<<grid_for(p.outputs, kThreads), kThreads, 0, st>>>(p, static_cast<const T*>(x),
                                                                          static_cast<T*>(y));
    }
    KILN_CUDA_CHECK_LAUNCH();
  });
}

void launch_arg_reduce(DType t, bool is_max, bool last_index, int64_t outer, int64_t len, int64_t inner, const void* x,
                       int64_t* y, cudaStream_t st) {
  if (outer * inner == 0 || len == 0) return;
  dispatch(t, FloatTypes{}, [&](auto tag) {
    using T = decltype(tag);
    arg_reduce<T><<<grid_for(outer * inner, kThreads), kThreads, 0, st>>>(is_max, last_index, outer, len, inner,
                                                                         static_cast<const T*>(x), y);
    KILN_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace kiln::gpu::kern
