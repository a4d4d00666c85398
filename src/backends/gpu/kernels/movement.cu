// Data-movement kernels, instantiated per element size (1, 2, 4, 8 bytes).
#include "backends/gpu/check.h"
#include "backends/gpu/kernels/device_types.cuh"
#include "backends/gpu/kernels/movement.h"

namespace kiln::gpu::kern {
namespace {

constexpr int kThreads = 256;

template <class F>
bool dispatch_size(size_t elem, F&& f) {
  switch (elem) {
    case 1: f(uint8_t{}); return true;
    case 2: f(uint16_t{}); return true;
    case 4: f(uint32_t{}); return true;
    case 8: f(uint64_t{}); return true;
    default: return false;
  }
}

template <class E>
__global__ void strided_copy(const E* __restrict__ in, E* __restrict__ out, int64_t n, int64_t base, Broadcast<1> s) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    int64_t off[1];
    s.offsets(i, off);
    out[i] = in[base + off[0]];
  }
}

constexpr int kTile = 32;

// One block per 32x32 tile (grid z: batch); 32x8 threads, each moving 4 elements. The +1
// column of padding keeps the transposed shared-memory reads off a single bank.
template <class E>
__global__ void transpose_tiled(const E* __restrict__ in, E* __restrict__ out, int64_t q, int64_t p) {
  __shared__ E tile[kTile][kTile + 1];
  const int64_t b = blockIdx.z;
  const int64_t p0 = static_cast<int64_t>(blockIdx.x) * kTile, q0 = static_cast<int64_t>(blockIdx.y) * kTile;
  const E* src = in + b * q * p;
  E* dst = out + b * q * p;
  for (int r = threadIdx.y; r < kTile; r += blockDim.y) {
    const int64_t qi = q0 + r, pi = p0 + threadIdx.x;
    if (qi < q && pi < p) tile[r][threadIdx.x] = src[qi * p + pi];
  }
  __syncthreads();
  for (int r = threadIdx.y; r < kTile; r += blockDim.y) {
    const int64_t pi = p0 + r, qi = q0 + threadIdx.x;
    if (pi < p && qi < q) dst[pi * q + qi] = tile[threadIdx.x][r];
  }
}

template <class E>
__global__ void axis_gather(const E* __restrict__ in, E* __restrict__ out, int64_t n, AxisGather g,
                            const int64_t* __restrict__ tables) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  E fill;
  memcpy(&fill, &g.fill, sizeof(E));
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    int64_t rest = i, off = 0;
    bool inside = true;
    for (int d = g.rank - 1; d >= 0; --d) {
      const int64_t c = rest % g.dims[d];
      rest /= g.dims[d];
      const int64_t t = tables[g.table_start[d] + c];
      inside = inside && t >= 0;
      off += t;
    }
    out[i] = inside ? in[off] : fill;
  }
}

template <class E, class I>
__global__ void gather_axis(const E* __restrict__ data, const I* __restrict__ idx, E* __restrict__ out, int64_t n,
                            int64_t axis_len, int64_t num_indices, int64_t inner) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const int64_t in_i = i % inner;
    const int64_t j = (i / inner) % num_indices;
    const int64_t o = i / (inner * num_indices);
    int64_t k = static_cast<int64_t>(idx[j]);
    if (k < 0) k += axis_len;
    k = k < 0 ? 0 : (k >= axis_len ? axis_len - 1 : k);
    out[i] = data[(o * axis_len + k) * inner + in_i];
  }
}

template <class E>
__global__ void pad_last_axis(const E* __restrict__ in, E* __restrict__ out, int64_t rows, int64_t c, int64_t c_pad) {
  const int64_t n = rows * c_pad;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const int64_t r = i / c_pad, ch = i - r * c_pad;
    out[i] = ch < c ? in[r * c + ch] : E{0};
  }
}

}  // namespace

void launch_strided_copy(size_t elem, const void* in, void* out, int64_t n, int64_t base, const Broadcast<1>& s,
                         cudaStream_t st) {
  if (n == 0) return;
  dispatch_size(elem, [&](auto e) {
    using E = decltype(e);
    strided_copy<E><<<grid_for(n, kThreads), kThreads, 0, st>>>(static_cast<const E*>(in), static_cast<E*>(out), n,
                                                                base, s);
    KILN_CUDA_CHECK_LAUNCH();
  });
}

void launch_transpose_tiled(size_t elem, const void* in, void* out, int64_t batch, int64_t q, int64_t p,
                            cudaStream_t st) {
  if (batch * q * p == 0) return;
  dispatch_size(elem, [&](auto e) {
    using E = decltype(e);
    const dim3 grid(static_cast<unsigned>((p + kTile - 1) / kTile), static_cast<unsigned>((q + kTile - 1) / kTile),
                    static_cast<unsigned>(batch));
    transpose_tiled<E><<<grid, dim3(kTile, 8), 0, st>>>(static_cast<const E*>(in), static_cast<E*>(out), q, p);
    KILN_CUDA_CHECK_LAUNCH();
  });
}

void launch_axis_gather(size_t elem, const void* in, void* out, int64_t n, const AxisGather& g, const int64_t* tables,
                        cudaStream_t st) {
  if (n == 0) return;
  dispatch_size(elem, [&](auto e) {
    using E = decltype(e);
    axis_gather<E><<<grid_for(n, kThreads), kThreads, 0, st>>>(static_cast<const E*>(in), static_cast<E*>(out), n, g,
                                                                tables);
    KILN_CUDA_CHECK_LAUNCH();
  });
}

bool gather_index_supported(DType t) { return t == DType::kInt32 || t == DType::kInt64; }

void launch_gather(size_t elem, DType index_type, const void* data, const void* indices, void* out, int64_t outer,
                   int64_t axis_len, int64_t num_indices, int64_t inner, cudaStream_t st) {
  const int64_t n = outer * num_indices * inner;
  if (n == 0) return;
  dispatch_size(elem, [&](auto e) {
    using E = decltype(e);
    auto go = [&](auto i) {
      using I = decltype(i);
      gather_axis<E, I><<<grid_for(n, kThreads), kThreads, 0, st>>>(
          static_cast<const E*>(data), static_cast<const I*>(indices), static_cast<E*>(out), n, axis_len, num_indices,
          inner);
    };
    if (index_type == DType::kInt32) go(int32_t{});
    else go(int64_t{});
    KILN_CUDA_CHECK_LAUNCH();
  });
}

void launch_pad_last_axis(size_t elem, const void* in, void* out, int64_t rows, int64_t c, int64_t c_pad,
                          cudaStream_t st) {
  const int64_t n = rows * c_pad;
  if (n == 0) return;
  dispatch_size(elem, [&](auto e) {
    using E = decltype(e);
    pad_last_axis<E><<<grid_for(n, kThreads), kThreads, 0, st>>>(static_cast<const E*>(in), static_cast<E*>(out), rows,
                                                                  c, c_pad);
    KILN_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace kiln::gpu::kern
