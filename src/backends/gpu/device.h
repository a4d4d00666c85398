// One GPU as kiln uses it: its properties, one stream that all of a session's work goes to,
// and the vendor library handles bound to that stream (created on first use, since a model
// without convolutions never needs cuDNN). Plus RAII owners of device and pinned host memory.
#pragma once
#include <cstddef>
#include <string>

#include "backends/gpu/vendors/cuda.h"

namespace kiln::gpu {

// Versions as integers the libraries use (CUDA 13000 = 13.0, cuDNN 91400 = 9.14.0,
// cuBLAS 130100 = 13.1.0); 0 when not available (no driver).
struct LibraryVersions {
  int driver = 0;  // highest CUDA version the installed driver supports
  int runtime_built = 0, runtime_found = 0;
  int cudnn_built = 0, cudnn_found = 0;
  int cublas_built = 0, cublas_found = 0;
};
LibraryVersions library_versions();

// "13.0", "9.14.0", "13.1.0" from those integers.
std::string cuda_version_string(int v);
std::string cudnn_version_string(int v);
std::string cublas_version_string(int v);

// Number of usable GPUs; 0 (with *why set) when there is no GPU or no working driver.
int device_count(std::string* why = nullptr);

class Device {
 public:
  // Makes `id` current and creates the stream; throws GpuError when that fails.
  explicit Device(int id = 0);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  int id() const { return id_; }
  const cudaDeviceProp& props() const { return props_; }
  int sm() const { return props_.major * 10 + props_.minor; }  // 90 for sm_90
  cudaStream_t stream() const { return stream_; }
  // "NVIDIA H200 (sm_90, 139.8 GiB)"
  std::string describe() const;

  // Makes this device current on the calling thread (cheap; call before any CUDA work).
  void make_current() const;
  cudnnHandle_t cudnn();
  cublasLtHandle_t cublas_lt();

 private:
  int id_;
  cudaDeviceProp props_{};
  cudaStream_t stream_ = nullptr;
  cudnnHandle_t cudnn_ = nullptr;
  cublasLtHandle_t cublas_lt_ = nullptr;
};

// Bytes of device memory held by kiln's DeviceBuffers (all devices) now, and the most held at
// once since the last reset_device_bytes_peak() (a benchmark resets it after the build, so
// build-time scratch buffers do not count).
size_t device_bytes_in_use();
size_t device_bytes_peak();
void reset_device_bytes_peak();

// Device memory (cudaMalloc), freed on destruction. Move-only.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* data() const { return ptr_; }
  size_t bytes() const { return bytes_; }
  // Synchronous upload of `bytes` from host (build time only).
  void upload(const void* host, size_t bytes);

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

// Page-locked host memory (cudaMallocHost), so copies to and from the device run async.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(size_t bytes);
  ~PinnedBuffer();
  PinnedBuffer(PinnedBuffer&& o) noexcept;
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;

  void* data() const { return ptr_; }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace kiln::gpu
