// Schemas of the broadcasting elementwise ops: arithmetic, comparisons, logic, the variadic
// Max/Min/Sum/Mean, Pow, PRelu and Where.
#include "core/error.h"
#include "ops/elementwise.h"
#include "ops/shape_util.h"

namespace kiln::ops {
namespace {

using namespace elementwise;

// An op whose inputs (at least `min_inputs`, at most `max_inputs`, -1 for any number) share
// one dtype from `allowed` and broadcast multidirectionally; the output has their dtype, or
// bool for predicates.
OpSchema broadcast_schema(std::string op_type, std::vector<DType> allowed, int min_inputs, int max_inputs,
                          bool bool_output, std::vector<std::string> attributes = {}) {
  OpSchema s;
  s.op_type = std::move(op_type);
  s.attributes = std::move(attributes);
  s.infer = [=](InferContext& ctx) {
    KILN_RETURN_IF_ERROR(check_inputs(ctx, min_inputs, max_inputs));
    std::vector<int> all;
    for (int i = 0; i < ctx.num_inputs(); ++i) {
      if (!ctx.has_input(i)) return invalid_argument("{}: input {} is required", ctx.node.op_type, i);
      KILN_RETURN_IF_ERROR(check_same_dtype(ctx, 0, i));
      all.push_back(i);
    }
    KILN_RETURN_IF_ERROR(check_dtype(ctx, 0, allowed));
    return infer_broadcast(ctx, all, bool_output ? DType::kBool : ctx.input_type(0).dtype);
  };
  return s;
}

Status canonicalize_mod(ir::Node& node, ir::Graph&) {
  const int64_t fmod = node.attr_i("fmod", 0);
  if (fmod != 0 && fmod != 1) return invalid_argument("Mod: fmod must be 0 or 1, got {}", fmod);
  return Status::OK();
}

Status canonicalize_bitshift(ir::Node& node, ir::Graph&) {
  const std::string d = node.attr_s("direction", "");
  if (d != "LEFT" && d != "RIGHT") return invalid_argument("BitShift: direction must be 'LEFT' or 'RIGHT', got '{}'", d);
  return Status::OK();
}

Status infer_pow(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_inputs(ctx, 2, 2));
  KILN_RETURN_IF_ERROR(check_dtype(ctx, 0, dtypes_of(PowBaseTypes{})));
  KILN_RETURN_IF_ERROR(check_dtype(ctx, 1, dtypes_of(PowExponentTypes{})));
  return infer_broadcast(ctx, {0, 1}, ctx.input_type(0).dtype);
}

// PRelu's slope broadcasts unidirectionally: the output always has X's shape.
Status infer_prelu(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_inputs(ctx, 2, 2));
  KILN_RETURN_IF_ERROR(check_dtype(ctx, 0, dtypes_of(PReluTypes{})));
  KILN_RETURN_IF_ERROR(check_same_dtype(ctx, 0, 1));
  const ir::TensorType& x = ctx.input_type(0);
  const ir::TensorType& slope = ctx.input_type(1);
  if (x.is_concrete() && slope.is_concrete()) {
    std::vector<int64_t> out;
    const Status st = broadcast_shapes({x.concrete(), slope.concrete()}, &out);
    if (!st.ok() || out != x.concrete()) {
      return invalid_argument("PRelu: slope {} does not broadcast to X {}", slope.to_string(), x.to_string());
    }
  }
  same_as_input(ctx, 0, 0);
  return Status::OK();
}

Status infer_where(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_inputs(ctx, 3, 3));
  KILN_RETURN_IF_ERROR(check_dtype(ctx, 0, {DType::kBool}));
  KILN_RETURN_IF_ERROR(check_same_dtype(ctx, 1, 2));
  KILN_RETURN_IF_ERROR(check_dtype(ctx, 1, dtypes_of(AllTypes{})));
  return infer_broadcast(ctx, {0, 1, 2}, ctx.input_type(1).dtype);
}

}  // namespace

void register_binary_ops(OpRegistry& r) {
  const std::vector<DType> numeric = dtypes_of(NumericTypes{});
  const std::vector<DType> floats = dtypes_of(IeeeFloatTypes{});
  const std::vector<DType> bools = {DType::kBool};
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) r.add(broadcast_schema(op, numeric, 2, 2, false));
  OpSchema mod = broadcast_schema("Mod", numeric, 2, 2, false, {"fmod"});
  mod.canonicalize = canonicalize_mod;
  r.add(std::move(mod));
  for (const char* op : {"Max", "Min"}) r.add(broadcast_schema(op, numeric, 1, -1, false));
  for (const char* op : {"Sum", "Mean"}) r.add(broadcast_schema(op, floats, 1, -1, false));
  r.add(broadcast_schema("Equal", dtypes_of(EqualTypes{}), 2, 2, true));
  for (const char* op : {"Less", "Greater", "LessOrEqual", "GreaterOrEqual"}) {
    r.add(broadcast_schema(op, numeric, 2, 2, true));
  }
  for (const char* op : {"And", "Or", "Xor"}) r.add(broadcast_schema(op, bools, 2, 2, true));
  for (const char* op : {"BitwiseAnd", "BitwiseOr", "BitwiseXor"}) {
    r.add(broadcast_schema(op, dtypes_of(IntTypes{}), 2, 2, false));
  }
  OpSchema shift = broadcast_schema("BitShift", dtypes_of(UnsignedIntTypes{}), 2, 2, false, {"direction"});
  shift.canonicalize = canonicalize_bitshift;
  r.add(std::move(shift));
  r.add(make_schema("Pow", infer_pow));
  r.add(make_schema("PRelu", infer_prelu));
  r.add(make_schema("Where", infer_where));
}

}  // namespace kiln::ops
