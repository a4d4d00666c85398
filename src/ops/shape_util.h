// Helpers shared by op shape inference (and by kernels that need the same arithmetic).
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "ir/types.h"
#include "kiln/status.h"
#include "kiln/tensor.h"
#include "ops/op_schema.h"

namespace kiln::ops {

// Normalizes a possibly negative axis into [0, rank); error when out of range.
Status normalize_axis(int64_t axis, int rank, int64_t* out);

// Multidirectional (numpy) broadcasting of static shapes. Unknown dims broadcast to unknown
// unless the other side is known and not 1. Error when known dims disagree.
Status broadcast_types(const std::vector<const ir::TensorType*>& in, std::vector<ir::Dim>* out);
// The same for concrete shapes.
Status broadcast_shapes(const std::vector<std::vector<int64_t>>& in, std::vector<int64_t>* out);

// Reads an integer tensor (int32 or int64, any rank) as int64 values.
Status tensor_to_ints(const Tensor& t, std::vector<int64_t>* out);
// Reads a float-typed scalar/1-D tensor as doubles.
Status tensor_to_doubles(const Tensor& t, std::vector<double>* out);
// Makes a 1-D int64 tensor.
Tensor ints_to_tensor(const std::vector<int64_t>& v);

// Sets output i to the dtype and the given (possibly unknown) shape.
void set_output(InferContext& ctx, int i, DType t, std::optional<std::vector<ir::Dim>> shape);
// Sets output i to the same dtype and shape as input j.
void same_as_input(InferContext& ctx, int i, int j);

// Checks that input i's dtype is one of `allowed`; names the op and input in the error.
Status expect_dtype(const InferContext& ctx, int i, std::initializer_list<DType> allowed);

}  // namespace kiln::ops
