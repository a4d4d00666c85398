// RAII owner of one cuDNN backend (graph API) descriptor, with typed setters. Every call is
// checked: a failure throws GpuError naming the attribute, so the caller can drop a tactic
// that cuDNN refuses without crashing the build.
#pragma once
#include <fmt/format.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "backends/gpu/check.h"

namespace kiln::gpu::dnn {

class BackendDesc {
 public:
  BackendDesc() = default;
  explicit BackendDesc(cudnnBackendDescriptorType_t type) {
    KILN_CUDNN_CHECK(cudnnBackendCreateDescriptor(type, &d_));
  }
  ~BackendDesc() {
    if (d_) cudnnBackendDestroyDescriptor(d_);
  }
  BackendDesc(BackendDesc&& o) noexcept : d_(std::exchange(o.d_, nullptr)) {}
  BackendDesc& operator=(BackendDesc&& o) noexcept {
    std::swap(d_, o.d_);
    return *this;
  }
  BackendDesc(const BackendDesc&) = delete;
  BackendDesc& operator=(const BackendDesc&) = delete;

  cudnnBackendDescriptor_t get() const { return d_; }
  explicit operator bool() const { return d_ != nullptr; }

  BackendDesc& set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t count,
                   const void* values) {
    const cudnnStatus_t st = cudnnBackendSetAttribute(d_, name, type, count, values);
    if (st != CUDNN_STATUS_SUCCESS) {
      throw GpuError(fmt::format("cuDNN graph: setting attribute {} failed: {}", static_cast<int>(name),
                                 cudnn_error_text(st)));
    }
    return *this;
  }
  BackendDesc& set_i64(cudnnBackendAttributeName_t name, int64_t v) {
    return set(name, CUDNN_TYPE_INT64, 1, &v);
  }
  BackendDesc& set_i64s(cudnnBackendAttributeName_t name, const std::vector<int64_t>& v) {
    return set(name, CUDNN_TYPE_INT64, static_cast<int64_t>(v.size()), v.data());
  }
  BackendDesc& set_double(cudnnBackendAttributeName_t name, double v) {
    return set(name, CUDNN_TYPE_DOUBLE, 1, &v);
  }
  BackendDesc& set_float(cudnnBackendAttributeName_t name, float v) {
    return set(name, CUDNN_TYPE_FLOAT, 1, &v);
  }
  BackendDesc& set_dtype(cudnnBackendAttributeName_t name, cudnnDataType_t v) {
    return set(name, CUDNN_TYPE_DATA_TYPE, 1, &v);
  }
  BackendDesc& set_desc(cudnnBackendAttributeName_t name, cudnnBackendDescriptor_t v) {
    return set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &v);
  }
  BackendDesc& set_desc(cudnnBackendAttributeName_t name, const BackendDesc& v) {
    return set_desc(name, v.get());
  }
  BackendDesc& set_handle(cudnnBackendAttributeName_t name, cudnnHandle_t h) {
    return set(name, CUDNN_TYPE_HANDLE, 1, &h);
  }

  // Throws when cuDNN refuses the descriptor; try_finalize() returns the status instead.
  void finalize() {
    const cudnnStatus_t st = try_finalize();
    if (st != CUDNN_STATUS_SUCCESS) throw GpuError("cuDNN graph: finalize failed: " + cudnn_error_text(st));
  }
  cudnnStatus_t try_finalize() { return cudnnBackendFinalize(d_); }

  // Reads an INT64 attribute (throws when cuDNN cannot say).
  int64_t get_i64(cudnnBackendAttributeName_t name) const {
    int64_t v = 0, n = 0;
    KILN_CUDNN_CHECK(cudnnBackendGetAttribute(d_, name, CUDNN_TYPE_INT64, 1, &n, &v));
    return v;
  }

 private:
  cudnnBackendDescriptor_t d_ = nullptr;
};

}  // namespace kiln::gpu::dnn
