// Schemas of the elementwise math ops with one input (Abs, Exp, Sin, IsNaN, ...) and Clip.
#include "core/error.h"
#include "ops/elementwise.h"
#include "ops/shape_util.h"

namespace kiln::ops {
namespace {

using elementwise::unary_schema;

// Clip before opset 11 takes min/max as float attributes; later as optional scalar inputs.
Status canonicalize_clip(ir::Node& node, ir::Graph& g) {
  if (node.opset >= 11) return Status::OK();
  // Before opset 11 Clip only accepted float types. When the input's dtype is not known yet,
  // float32 bounds are used and the kernel converts them.
  DType t = node.inputs.empty() || !node.inputs[0] ? DType::kUndefined : node.inputs[0]->type.dtype;
  if (t != DType::kFloat64 && t != DType::kFloat16) t = DType::kFloat32;
  node.inputs.resize(3, nullptr);
  const char* names[] = {"min", "max"};
  for (int k = 0; k < 2; ++k) {
    if (!node.has_attr(names[k])) continue;
    Tensor bound = Tensor(DType::kFloat32, {});
    *bound.data_as<float>() = node.attr_f(names[k], 0.0f);
    ir::Value* v = g.add_constant(node.name + "_" + names[k], bound.to(t));
    node.inputs[1 + k] = v;
    v->consumers.push_back(&node);
    node.attrs.erase(names[k]);
  }
  while (!node.inputs.empty() && !node.inputs.back()) node.inputs.pop_back();
  return Status::OK();
}

Status infer_clip(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(elementwise::check_inputs(ctx, 1, 3));
  KILN_RETURN_IF_ERROR(elementwise::check_dtype(ctx, 0, dtypes_of(NumericTypes{})));
  for (int i = 1; i < 3; ++i) {
    if (!ctx.has_input(i)) continue;
    const ir::TensorType& t = ctx.input_type(i);
    // The bound must share the input's dtype, except float bounds made from old-opset
    // attributes, which the kernel converts.
    if (t.dtype != ctx.input_type(0).dtype && !(ctx.node.opset < 11 && t.dtype == DType::kFloat32)) {
      KILN_RETURN_IF_ERROR(elementwise::check_same_dtype(ctx, 0, i));
    }
    if (t.is_concrete() && Tensor::numel_of(t.concrete()) != 1) {
      return invalid_argument("Clip: input {} ({}) must be a scalar, got shape {}", i, i == 1 ? "min" : "max",
                              t.to_string());
    }
  }
  same_as_input(ctx, 0, 0);
  return Status::OK();
}

}  // namespace

void register_unary_ops(OpRegistry& r) {
  const std::vector<DType> floats = dtypes_of(IeeeFloatTypes{});
  for (const char* op : {"Sqrt", "Exp", "Log", "Reciprocal", "Floor", "Ceil", "Round", "Sin", "Cos", "Tan", "Asin",
                         "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh"}) {
    r.add(unary_schema(op, floats));
  }
  for (const char* op : {"Abs", "Sign", "Erf"}) r.add(unary_schema(op, dtypes_of(NumericTypes{})));
  r.add(unary_schema("Neg", dtypes_of(SignedNumericTypes{})));
  r.add(unary_schema("Not", dtypes_of(BoolTypes{})));
  r.add(unary_schema("BitwiseNot", dtypes_of(IntTypes{})));
  r.add(unary_schema("IsNaN", dtypes_of(IsNaNTypes{}), {}, DType::kBool));
  r.add(unary_schema("IsInf", dtypes_of(IsNaNTypes{}), {"detect_negative", "detect_positive"}, DType::kBool));
  r.add(elementwise::make_schema("Clip", infer_clip, {"min", "max"}, canonicalize_clip));
}

}  // namespace kiln::ops
