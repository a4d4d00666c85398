#include <stdexcept>

#include "backends/gpu/kernels/registry.h"
#include "backends/gpu/layer.h"

namespace kiln::gpu {

// Each family of layers registers itself here (one line per family, defined in its folder).
void register_dnn_layers(LayerRegistry& r);   // dnn/: cuDNN convolutions
void register_blas_layers(LayerRegistry& r);  // blas/: cuBLASLt Gemm, MatMul

LayerRegistry::LayerRegistry() {
  register_kernel_layers(*this);  // kernels/: kiln's own kernels
  register_dnn_layers(*this);
  register_blas_layers(*this);
}

LayerRegistry& LayerRegistry::instance() {
  static LayerRegistry registry;
  return registry;
}

void LayerRegistry::add(const std::string& domain, const std::string& op_type, LayerFactory factory) {
  if (!factories_.emplace(std::make_pair(domain, op_type), std::move(factory)).second) {
    throw std::logic_error("GPU layer registered twice: " + (domain.empty() ? "" : domain + ".") + op_type);
  }
}

const LayerFactory* LayerRegistry::find(const std::string& domain, const std::string& op_type) const {
  auto it = factories_.find({domain, op_type});
  return it == factories_.end() ? nullptr : &it->second;
}

std::vector<std::string> LayerRegistry::op_types() const {
  std::vector<std::string> out;
  for (const auto& [key, f] : factories_) out.push_back(key.first.empty() ? key.second : key.first + "." + key.second);
  return out;
}

}  // namespace kiln::gpu
