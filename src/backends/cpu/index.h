// Helpers shared by the CPU index-family kernels.
#pragma once
#include <cstdint>
#include <vector>

#include "backends/cpu/kernel.h"
#include "core/dispatch.h"
#include "core/error.h"
#include "ops/index.h"
#include "ops/shape_util.h"

namespace kiln::cpu {

void register_select_kernels(KernelRegistry& r);
void register_index_misc_kernels(KernelRegistry& r);

// Data-movement kernels copy elements without looking at them, so they dispatch on the
// element size only: f(Tag<U>) with an unsigned integer U of that size.
template <class F>
bool dispatch_by_size(DType t, F&& f) {
  switch (dtype_size(t)) {
    case 1: f(Tag<uint8_t>{}); return true;
    case 2: f(Tag<uint16_t>{}); return true;
    case 4: f(Tag<uint32_t>{}); return true;
    case 8: f(Tag<uint64_t>{}); return true;
    default: return false;
  }
}

// Reads an index tensor and brings every index into [0, dim), or names the first bad one.
inline Status read_indices(const Tensor& t, int64_t dim, std::vector<int64_t>* out) {
  KILN_RETURN_IF_ERROR(ops::tensor_to_ints(t, out));
  for (int64_t& i : *out) KILN_RETURN_IF_ERROR(ops::normalize_index(i, dim, &i));
  return Status::OK();
}

// Row-major strides of a shape, in elements.
inline std::vector<int64_t> strides_of(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d) s[d] = s[d + 1] * shape[d + 1];
  return s;
}

// The [outer, axis, inner] view of a shape around `axis`.
struct AxisView {
  int64_t outer = 1, len = 1, inner = 1;
  AxisView(const std::vector<int64_t>& shape, int64_t axis) {
    for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
      if (d < axis) outer *= shape[d];
      else if (d == axis) len = shape[d];
      else inner *= shape[d];
    }
  }
};

}  // namespace kiln::cpu
