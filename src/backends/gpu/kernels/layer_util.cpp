#include "backends/gpu/kernels/layer_util.h"

#include "backends/gpu/check.h"
#include "core/dispatch.h"

namespace kiln::gpu::kern {

DeviceBuffer::DeviceBuffer(const void* host, size_t bytes) : bytes_(bytes) {
  if (bytes == 0) return;
  KILN_CUDA_CHECK(cudaMalloc(&ptr_, bytes));
  KILN_CUDA_CHECK(cudaMemcpy(ptr_, host, bytes, cudaMemcpyHostToDevice));
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_ != nullptr) cudaFree(ptr_);
}

bool constant_ints(const LayerBuildContext& ctx, size_t i, std::vector<int64_t>* v) {
  const Tensor* t = constant_input(ctx, i);
  if (t == nullptr) return false;
  v->clear();
  return dispatch<TypeList<int32_t, int64_t>>(t->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (int64_t k = 0; k < t->numel(); ++k) v->push_back(static_cast<int64_t>(t->data_as<T>()[k]));
  });
}

bool constant_doubles(const LayerBuildContext& ctx, size_t i, std::vector<double>* v) {
  const Tensor* t = constant_input(ctx, i);
  if (t == nullptr) return false;
  v->clear();
  return dispatch<NumericTypes>(t->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (int64_t k = 0; k < t->numel(); ++k) v->push_back(convert<double>(t->data_as<T>()[k]));
  });
}

}  // namespace kiln::gpu::kern
