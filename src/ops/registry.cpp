#include "core/error.h"
#include "ops/op_schema.h"

namespace kiln::ops {

OpRegistry& OpRegistry::instance() {
  static OpRegistry r;
  return r;
}

// Registration is explicit (no static initializers), so linking kiln as a static library
// never drops an op family.
OpRegistry::OpRegistry() {
  register_elementwise_ops(*this);
  register_cast_quant_ops(*this);
  register_tensor_ops(*this);
  register_index_ops(*this);
  register_conv_pool_ops(*this);
  register_norm_ops(*this);
  register_matmul_ops(*this);
  register_reduce_ops(*this);
  register_resize_ops(*this);
  register_control_ops(*this);
  register_rnn_ops(*this);
  register_extra_vision_ops(*this);
  register_extra_nn_ops(*this);
  register_fused_elementwise_ops(*this);
  register_layout_ops(*this);
  register_fused_ops(*this);
}

void OpRegistry::add(OpSchema schema) {
  KILN_ASSERT(schema.infer != nullptr, "op {} registered without shape inference", schema.op_type);
  auto key = std::make_pair(schema.domain, schema.op_type);
  KILN_ASSERT(!schemas_.count(key), "op {} registered twice", schema.op_type);
  schemas_.emplace(key, std::move(schema));
}

const OpSchema* OpRegistry::find(const std::string& domain, const std::string& op_type) const {
  const std::string d = domain == "ai.onnx" ? "" : domain;
  auto it = schemas_.find({d, op_type});
  return it == schemas_.end() ? nullptr : &it->second;
}

std::vector<std::string> OpRegistry::op_types() const {
  std::vector<std::string> out;
  for (const auto& [k, s] : schemas_) out.push_back(k.first.empty() ? k.second : k.first + "." + k.second);
  return out;
}

}  // namespace kiln::ops
