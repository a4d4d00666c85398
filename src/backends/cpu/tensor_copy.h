// Byte-level copy machinery shared by the CPU kernels of the shape and data-movement ops.
// These ops only move elements, so the kernels work on element size instead of type: one
// instantiation per size (1, 2, 4, 8 bytes) serves every dtype.
#pragma once
#include <cstdint>
#include <vector>

#include "kiln/tensor.h"

namespace kiln::cpu {

// Row-major element strides of `shape`.
std::vector<int64_t> strides_of(const std::vector<int64_t>& shape);

// For each output axis k and index i along it: the input element offset that index adds, or
// -1 when the element is the fill value (padding). Slice, Pad, Tile, Expand and Transpose
// are all such per-axis maps, so one loop serves them all.
using AxisOffsets = std::vector<std::vector<int64_t>>;

// out[i_0, ..., i_n] = in[sum_k offsets[k][i_k]], or *fill (one element of out's dtype; zero
// when null) if any offsets[k][i_k] is -1. `out` is allocated with dims offsets[k].size().
void gather_axes(const Tensor& in, const AxisOffsets& offsets, const void* fill, Tensor* out);

// Sets every element of `out` to *value (one element of out's dtype).
void fill_elements(const void* value, Tensor* out);

// Offsets that make gather_axes transpose `in_shape` by `perm` (out axis k = in axis perm[k]).
AxisOffsets transpose_offsets(const std::vector<int64_t>& in_shape, const std::vector<int64_t>& perm);

// Offsets that make gather_axes copy axes unchanged.
AxisOffsets identity_offsets(const std::vector<int64_t>& shape);

}  // namespace kiln::cpu
