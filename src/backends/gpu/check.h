// Every CUDA / cuDNN / cuBLAS call goes through one of these checks. A failure throws
// GpuError naming the call, the file and the line, and the library's own error text; the
// session turns it into a Status at the API boundary.
#pragma once
#include <stdexcept>
#include <string>

#include "backends/gpu/vendors/cuda.h"

namespace kiln::gpu {

class GpuError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] void throw_gpu_error(const char* library, const char* call, const char* file, int line,
                                  const std::string& detail);
// The library's name for a status plus cuDNN's last error message when it has one.
std::string cudnn_error_text(cudnnStatus_t status);
std::string cublas_error_text(cublasStatus_t status);

}  // namespace kiln::gpu

#define KILN_CUDA_CHECK(call)                                                                  \
  do {                                                                                         \
    const cudaError_t kiln_err_ = (call);                                                      \
    if (kiln_err_ != cudaSuccess) {                                                            \
      ::kiln::gpu::throw_gpu_error("CUDA", #call, __FILE__, __LINE__, cudaGetErrorString(kiln_err_)); \
    }                                                                                          \
  } while (0)

// Checks the last kernel launch (launch configuration errors surface here, not at the launch).
#define KILN_CUDA_CHECK_LAUNCH() KILN_CUDA_CHECK(cudaGetLastError())

#define KILN_CUDNN_CHECK(call)                                                                  \
  do {                                                                                          \
    const cudnnStatus_t kiln_err_ = (call);                                                     \
    if (kiln_err_ != CUDNN_STATUS_SUCCESS) {                                                    \
      ::kiln::gpu::throw_gpu_error("cuDNN", #call, __FILE__, __LINE__, ::kiln::gpu::cudnn_error_text(kiln_err_)); \
    }                                                                                           \
  } while (0)

#define KILN_CUBLAS_CHECK(call)                                                                 \
  do {                                                                                          \
    const cublasStatus_t kiln_err_ = (call);                                                    \
    if (kiln_err_ != CUBLAS_STATUS_SUCCESS) {                                                   \
      ::kiln::gpu::throw_gpu_error("cuBLAS", #call, __FILE__, __LINE__, ::kiln::gpu::cublas_error_text(kiln_err_)); \
    }                                                                                           \
  } while (0)
