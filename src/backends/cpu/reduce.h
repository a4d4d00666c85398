// Walking a tensor for reductions, shared by the Reduce* and normalization kernels.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/dispatch.h"
#include "kiln/tensor.h"

namespace kiln::cpu {

// Strides of the keepdims output of a reduction over the dims marked in `reduced`, with 0
// along reduced dims, so that input index -> output index is a dot product.
inline std::vector<int64_t> reduce_output_strides(const std::vector<int64_t>& in, const std::vector<bool>& reduced) {
  const int rank = static_cast<int>(in.size());
  std::vector<int64_t> s(rank, 0);
  int64_t stride = 1;
  for (int d = rank - 1; d >= 0; --d) {
    if (reduced[d]) continue;
    s[d] = stride;
    stride *= in[d];
  }
  return s;
}

// Calls f(input_offset, output_offset) for every input element in row-major order, where the
// output offset advances by out_strides (0 along reduced dims).
template <class F>
void for_each_reduced(const std::vector<int64_t>& shape, const std::vector<int64_t>& out_strides, F&& f) {
  const int64_t n = Tensor::numel_of(shape);
  const int rank = static_cast<int>(shape.size());
  std::vector<int64_t> idx(rank, 0);
  int64_t o = 0;
  for (int64_t i = 0; i < n; ++i) {
    f(i, o);
    for (int d = rank - 1; d >= 0; --d) {
      o += out_strides[d];
      if (++idx[d] < shape[d]) break;
      o -= out_strides[d] * shape[d];
      idx[d] = 0;
    }
  }
}

// Converts a double result to element type T; integer results saturate (and NaN becomes 0)
// rather than invoking undefined behaviour.
template <class T>
T saturate_cast(double v) {
  if constexpr (std::is_integral_v<T>) {
    if (std::isnan(v)) return T(0);
    if (v <= static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
    if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return static_cast<T>(v);
  } else {
    return convert<T>(v);
  }
}

}  // namespace kiln::cpu
