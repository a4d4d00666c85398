// Multidirectional (numpy) broadcasting for the CPU elementwise kernels: walks the output in
// rows, giving each input's offset and step for the row, so inner loops stay simple and
// free of per-element index arithmetic.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "kiln/tensor.h"

namespace kiln::cpu {

// Calls row(out_offset, in_offsets, in_steps, count) for runs of `count` output elements
// that are contiguous in the output; element k of the run reads input i at
// in_offsets[i] + k * in_steps[i] (in elements). Every input shape must broadcast to
// out_shape. Inputs as large as the output or with one element make the whole output one
// run; otherwise adjacent dims that broadcast alike are merged to make runs long.
template <size_t N, class RowFn>
void for_each_broadcast_row(const std::vector<int64_t>& out_shape,
                            const std::array<const std::vector<int64_t>*, N>& in_shapes, RowFn&& row) {
  const int64_t total = Tensor::numel_of(out_shape);
  if (total == 0) return;
  std::array<int64_t, N> offsets{}, steps{};
  bool one_run = true;
  for (size_t i = 0; i < N; ++i) {
    const int64_t n = Tensor::numel_of(*in_shapes[i]);
    // Same element count as the output means the same layout (they differ only in 1s).
    steps[i] = n == total ? 1 : 0;
    one_run = one_run && (n == total || n == 1);
  }
  if (one_run) {
    row(int64_t{0}, offsets, steps, total);
    return;
  }

  // Per-input strides aligned to the output's rank; 0 where the input broadcasts.
  const size_t rank = out_shape.size();
  std::vector<int64_t> dims;
  std::array<std::vector<int64_t>, N> strides;
  for (size_t i = 0; i < N; ++i) {
    const std::vector<int64_t>& s = *in_shapes[i];
    strides[i].assign(rank, 0);
    int64_t stride = 1;
    for (size_t d = s.size(); d-- > 0;) {
      strides[i][rank - s.size() + d] = s[d] == 1 ? 0 : stride;
      stride *= s[d];
    }
  }
  // Merge dim d into the previous kept dim when every input walks both as one.
  std::array<std::vector<int64_t>, N> merged;
  for (size_t d = 0; d < rank; ++d) {
    if (out_shape[d] == 1) continue;  // size-1 output dims add no iterations
    bool mergeable = !dims.empty();
    for (size_t i = 0; i < N && mergeable; ++i) {
      mergeable = merged[i].back() == strides[i][d] * out_shape[d];
    }
    if (mergeable) {
      dims.back() *= out_shape[d];
      for (size_t i = 0; i < N; ++i) merged[i].back() = strides[i][d];
    } else {
      dims.push_back(out_shape[d]);
      for (size_t i = 0; i < N; ++i) merged[i].push_back(strides[i][d]);
    }
  }

  const size_t inner = dims.size() - 1;
  for (size_t i = 0; i < N; ++i) steps[i] = merged[i][inner];
  const int64_t run = dims[inner];
  std::vector<int64_t> index(inner, 0);  // odometer over the outer dims
  for (int64_t out = 0; out < total; out += run) {
    row(out, offsets, steps, run);
    for (size_t d = inner; d-- > 0;) {
      for (size_t i = 0; i < N; ++i) offsets[i] += merged[i][d];
      if (++index[d] < dims[d]) break;
      for (size_t i = 0; i < N; ++i) offsets[i] -= merged[i][d] * dims[d];
      index[d] = 0;
    }
  }
}

}  // namespace kiln::cpu
