#include "backends/gpu/check.h"

#include <fmt/format.h>

namespace kiln::gpu {

void throw_gpu_error(const char* library, const char* call, const char* file, int line, const std::string& detail) {
  throw GpuError(fmt::format("{} error at {}:{}: {} failed: {}", library, file, line, call, detail));
}

std::string cudnn_error_text(cudnnStatus_t status) {
  std::string text = cudnnGetErrorString(status);
  // cuDNN 9 keeps a per-thread log of why the last call failed; it names the bad parameter.
  char message[1024] = {0};
  cudnnGetLastErrorString(message, sizeof(message));
  if (message[0] != '\0') text += fmt::format(" ({})", message);
  return text;
}

// cublasGetStatusName lives in libcublas, which kiln does not link (only cuBLASLt).
std::string cublas_error_text(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED (handle not created)";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED (out of memory)";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE (bad parameter or layout)";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH (feature absent on this GPU)";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED (kernel failed to run)";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED (combination of types/layouts/epilogue)";
    default: return fmt::format("cublasStatus_t {}", static_cast<int>(status));
  }
}

}  // namespace kiln::gpu
