// Helpers shared by the index family's shape inference and kernels (Gather*, Scatter*,
// TopK, ArgMax/ArgMin, NonZero, OneHot, CumSum).
#pragma once
#include <cstdint>
#include <string>

#include "core/error.h"
#include "core/numeric.h"
#include "ops/op_schema.h"

namespace kiln::ops {

void register_gather_scatter_ops(OpRegistry& r);
void register_select_ops(OpRegistry& r);  // TopK, ArgMax, ArgMin
void register_index_misc_ops(OpRegistry& r);  // NonZero, OneHot, CumSum

// Brings an index in [-dim, dim) into [0, dim); an error naming the value otherwise.
inline Status normalize_index(int64_t index, int64_t dim, int64_t* out) {
  if (index < -dim || index >= dim) {
    return invalid_argument("index {} is out of range for a dimension of size {}", index, dim);
  }
  *out = index < 0 ? index + dim : index;
  return Status::OK();
}

// NonZero's test, shared by its shape inference (which counts) and kernels.
template <class T>
bool is_nonzero(T v) {
  return static_cast<compute_t<T>>(v) != compute_t<T>(0);
}

// Scatter reductions (the "reduction" attribute of ScatterND / ScatterElements).
enum class ScatterReduction { kNone, kAdd, kMul, kMax, kMin };
Status parse_scatter_reduction(const std::string& s, ScatterReduction* out);

}  // namespace kiln::ops
