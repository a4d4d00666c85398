// Arithmetic shared by the matmul family's shape inference and its kernels: numpy matmul
// shapes, the Einsum equation, and the Softmax-family axis geometry.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "kiln/status.h"
#include "ops/op_schema.h"

namespace kiln::ops {

void register_einsum_ops(OpRegistry& r);
void register_softmax_ops(OpRegistry& r);

// Concrete geometry of a (batched, broadcast) numpy matmul after 1-D promotion.
struct MatMulShape {
  int64_t m = 1, n = 1, k = 1;
  std::vector<int64_t> batch;    // broadcast batch dims
  std::vector<int64_t> a_batch;  // A's batch dims, left-padded with 1s to batch.size()
  std::vector<int64_t> b_batch;
  std::vector<int64_t> out;      // output shape (promoted 1-D dims removed)
};
Status matmul_shape(const std::vector<int64_t>& a, const std::vector<int64_t>& b, MatMulShape* out);

// An Einsum equation resolved against the operand ranks. Labels are small integers:
// 0..51 for letters, kEllipsisLabel + j for the j-th dimension covered by "...", counted
// from the left of the broadcast ellipsis (operands with fewer ellipsis dims are right-aligned).
struct EinsumSpec {
  static constexpr int kEllipsisLabel = 64;
  std::vector<std::vector<int>> inputs;  // per operand, one label per dimension
  std::vector<int> output;
};
Status parse_einsum(const std::string& equation, const std::vector<int>& ranks, EinsumSpec* out);

// Softmax, LogSoftmax and Hardmax view their input as [outer, axis_len, inner] and normalize
// along the middle. Before opset 13 the input is coerced to 2-D at `axis` (default 1), so the
// "axis" spans every dimension from `axis` on; from 13 it is one dimension (default -1).
struct SoftmaxGeometry {
  int64_t outer = 1, axis_len = 1, inner = 1;
};
Status softmax_geometry(const ir::Node& node, const std::vector<int64_t>& shape, SoftmaxGeometry* out);

}  // namespace kiln::ops
