// Schemas of the activation functions (Relu, Gelu, Elu, ...). PRelu, having a second
// (slope) input, lives with the binary ops.
#include "core/error.h"
#include "ops/elementwise.h"

namespace kiln::ops {
namespace {

using elementwise::unary_schema;

Status canonicalize_gelu(ir::Node& node, ir::Graph&) {
  const std::string a = node.attr_s("approximate", "none");
  if (a != "none" && a != "tanh") return invalid_argument("Gelu: approximate must be 'none' or 'tanh', got '{}'", a);
  return Status::OK();
}

}  // namespace

void register_activation_ops(OpRegistry& r) {
  const std::vector<DType> floats = dtypes_of(IeeeFloatTypes{});
  r.add(unary_schema("Relu", dtypes_of(SignedNumericTypes{})));
  r.add(unary_schema("LeakyRelu", floats, {"alpha"}));
  r.add(unary_schema("HardSigmoid", floats, {"alpha", "beta"}));
  r.add(unary_schema("HardSwish", floats));
  r.add(unary_schema("Sigmoid", floats));
  r.add(unary_schema("Tanh", floats));
  r.add(unary_schema("Elu", floats, {"alpha"}));
  r.add(unary_schema("Selu", floats, {"alpha", "gamma"}));
  r.add(unary_schema("Celu", floats, {"alpha"}));
  r.add(unary_schema("ThresholdedRelu", floats, {"alpha"}));
  r.add(unary_schema("Softplus", floats));
  r.add(unary_schema("Softsign", floats));
  r.add(unary_schema("Mish", floats));
  r.add(unary_schema("Shrink", dtypes_of(NumericTypes{}), {"bias", "lambd"}));
  OpSchema gelu = unary_schema("Gelu", floats, {"approximate"});
  gelu.canonicalize = canonicalize_gelu;
  r.add(std::move(gelu));
}

}  // namespace kiln::ops
