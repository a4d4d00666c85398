// Data-movement kernels. They move elements of `elem` bytes without looking at their type,
// so one instance per element size serves every dtype.
#pragma once
#include <cstddef>
#include <cstdint>

#include "backends/gpu/kernels/broadcast.h"
#include "backends/gpu/vendors/cuda.h"
#include "kiln/dtype.h"

namespace kiln::gpu::kern {

// out[i] = in[base + sum_d c_d * s.strides[0][d]] for output coordinates c of dims s.dims:
// Transpose, Slice (any steps), Expand and Tile are all this with different strides.
void launch_strided_copy(size_t elem, const void* in, void* out, int64_t n, int64_t base, const Broadcast<1>& s,
                         cudaStream_t stream);

// out[b][p][q] = in[b][q][p] for in of shape [batch, q, p]: 32x32 tiles through shared memory so
// both the reads and the writes are coalesced.
void launch_transpose_tiled(size_t elem, const void* in, void* out, int64_t batch, int64_t q, int64_t p,
                            cudaStream_t stream);

// out[i] = in[sum_d table_d[c_d]], or `fill` (elem bytes) when any table entry is -1 (Pad).
// `tables` (device) holds the tables of dims 0..rank-1 one after another.
struct AxisGather {
  int rank = 0;
  int64_t dims[kMaxDims] = {};
  int64_t table_start[kMaxDims] = {};
  uint64_t fill = 0;  // the fill element's bytes
};
void launch_axis_gather(size_t elem, const void* in, void* out, int64_t n, const AxisGather& g, const int64_t* tables,
                        cudaStream_t stream);

// Zero-padding of the last axis only: [rows, c] -> [rows, c_pad] (channels-last channel padding
// before a tensor-core convolution); a direct index, no per-axis tables.
void launch_pad_last_axis(size_t elem, const void* in, void* out, int64_t rows, int64_t c, int64_t c_pad,
                          cudaStream_t stream);

// Gather along an axis: out[o][j][i] = data[o][idx[j]][i] (idx int32/int64, negative counts from
// the end; out-of-range indices are clamped: a kernel cannot report them).
bool gather_index_supported(DType t);
void launch_gather(size_t elem, DType index_type, const void* data, const void* indices, void* out, int64_t outer,
                   int64_t axis_len, int64_t num_indices, int64_t inner, cudaStream_t stream);

}  // namespace kiln::gpu::kern
