#include "backends/cpu/kernel.h"
#include "core/error.h"

namespace kiln::cpu {

Tensor& KernelContext::alloc_output(int i) {
  const ir::TensorType& t = inferred_.at(i);
  KILN_ASSERT(t.is_concrete(), "{}: output {} has no concrete shape to allocate", node_.describe(), i);
  outputs_.at(i) = Tensor(t.dtype, t.concrete());
  return outputs_[i];
}

Tensor& KernelContext::alloc_output(int i, DType t, std::vector<int64_t> shape) {
  outputs_.at(i) = Tensor(t, std::move(shape));
  return outputs_[i];
}

KernelRegistry& KernelRegistry::instance() {
  static KernelRegistry r;
  return r;
}

KernelRegistry::KernelRegistry() {
  register_elementwise_kernels(*this);
  register_cast_quant_kernels(*this);
  register_tensor_kernels(*this);
  register_index_kernels(*this);
  register_conv_pool_kernels(*this);
  register_norm_kernels(*this);
  register_matmul_kernels(*this);
  register_reduce_kernels(*this);
  register_resize_kernels(*this);
  register_control_kernels(*this);
  register_rnn_kernels(*this);
  register_extra_vision_kernels(*this);
  register_extra_nn_kernels(*this);
  register_fused_elementwise_kernels(*this);
  register_layout_kernels(*this);
  register_fused_kernels(*this);
}

void KernelRegistry::add(const std::string& op_type, Kernel k, const std::string& domain) {
  auto key = std::make_pair(domain, op_type);
  KILN_ASSERT(!kernels_.count(key), "CPU kernel {} registered twice", op_type);
  kernels_.emplace(key, std::move(k));
}

const Kernel* KernelRegistry::find(const std::string& domain, const std::string& op_type) const {
  auto it = kernels_.find({domain == "ai.onnx" ? "" : domain, op_type});
  return it == kernels_.end() ? nullptr : &it->second;
}

}  // namespace kiln::cpu
