// Arithmetic shared by the reduce family's shape inference and kernels: which axes a
// Reduce* node reduces, and the shape it produces.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "ir/graph.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::ops {

// The axes a reduction works on, after resolving the optional `axes` input.
struct ReduceAxes {
  bool noop = false;           // empty axes with noop_with_empty_axes: output = input
  std::vector<bool> reduced;   // per input dim (all true when axes were empty)
};

// Resolves `axes` (nullptr when absent or empty) for an input of rank `rank`, following the
// node's noop_with_empty_axes attribute. Negative axes count from the end; repeats are allowed.
Status resolve_reduce_axes(const ir::Node& node, const Tensor* axes, int rank, ReduceAxes* out);

// Output shape of a reduction (keepdims keeps reduced dims as 1, otherwise drops them).
std::vector<int64_t> reduced_shape(const std::vector<int64_t>& in, const ReduceAxes& axes, bool keepdims);

}  // namespace kiln::ops
