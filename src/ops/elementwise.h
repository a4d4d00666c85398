// Elementwise op family: the dtype sets each op accepts (newest ONNX opset), shared by the
// schemas (which reject other dtypes) and the kernels of every backend (which instantiate
// exactly these types), so the two can never disagree.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "core/dispatch.h"
#include "ops/op_schema.h"

namespace kiln::ops {

using BoolTypes = TypeList<bool>;
using UnsignedIntTypes = TypeList<uint8_t, uint16_t, uint32_t, uint64_t>;
// Floats plus signed integers: Relu, Neg.
using SignedNumericTypes = TypeList<float, double, float16, bfloat16, int8_t, int16_t, int32_t, int64_t>;
// Equal also compares bools.
using EqualTypes = TypeList<float, double, float16, bfloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
                            uint32_t, uint64_t, bool>;
using PReluTypes = TypeList<float, double, float16, bfloat16, int32_t, int64_t, uint32_t, uint64_t>;
// Pow: base (and output) types, exponent types.
using PowBaseTypes = TypeList<float, double, float16, bfloat16, int32_t, int64_t>;
using PowExponentTypes = NumericTypes;
// IsNaN / IsInf accept the fp8 formats as well.
using IsNaNTypes = FloatTypes;

template <class... Ts>
std::vector<DType> dtypes_of(TypeList<Ts...>) {
  return {dtype_of<Ts>()...};
}

// Each part of the family registers through one of these (called by register_elementwise_ops).
void register_unary_ops(OpRegistry& r);
void register_activation_ops(OpRegistry& r);
void register_binary_ops(OpRegistry& r);

namespace elementwise {

// Checks the number of inputs (`max_inputs` < 0: unbounded) and that the first
// `min_inputs` are present.
Status check_inputs(const InferContext& ctx, int min_inputs, int max_inputs);
// Checks that input i's dtype is in `allowed`.
Status check_dtype(const InferContext& ctx, int i, const std::vector<DType>& allowed);
// Checks that inputs i and j have the same dtype (ONNX's shared type constraint T).
Status check_same_dtype(const InferContext& ctx, int i, int j);

// Output 0 gets dtype `out` and the multidirectional broadcast of `inputs`' shapes.
Status infer_broadcast(InferContext& ctx, const std::vector<int>& inputs, DType out);

// A schema with the given inference and accepted attributes.
OpSchema make_schema(std::string op_type, std::function<Status(InferContext&)> infer,
                     std::vector<std::string> attributes = {},
                     std::function<Status(ir::Node&, ir::Graph&)> canonicalize = nullptr);

// Schema of an op whose output has its input's shape and dtype (or `out` when given).
OpSchema unary_schema(std::string op_type, std::vector<DType> allowed, std::vector<std::string> attributes = {},
                      DType out = DType::kUndefined);

}  // namespace elementwise
}  // namespace kiln::ops
