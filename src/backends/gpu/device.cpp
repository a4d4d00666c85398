#include "backends/gpu/device.h"

#include <fmt/format.h>

#include <atomic>
#include <utility>

#include "backends/gpu/check.h"

namespace kiln::gpu {

LibraryVersions library_versions() {
  LibraryVersions v;
  // Both calls work without a GPU; the driver call reports 0 when no driver is installed.
  if (cudaDriverGetVersion(&v.driver) != cudaSuccess) v.driver = 0;
  if (cudaRuntimeGetVersion(&v.runtime_found) != cudaSuccess) v.runtime_found = 0;
  v.runtime_built = CUDART_VERSION;
  v.cudnn_built = CUDNN_VERSION;
  v.cudnn_found = static_cast<int>(cudnnGetVersion());
  v.cublas_built = CUBLAS_VERSION;
  v.cublas_found = static_cast<int>(cublasLtGetVersion());
  return v;
}

std::string cuda_version_string(int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }
std::string cudnn_version_string(int v) { return fmt::format("{}.{}.{}", v / 10000, (v % 10000) / 100, v % 100); }
std::string cublas_version_string(int v) { return fmt::format("{}.{}.{}", v / 10000, (v % 10000) / 100, v % 100); }

int device_count(std::string* why) {
  int n = 0;
  const cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    if (why) *why = fmt::format("{} ({})", cudaGetErrorString(err), cudaGetErrorName(err));
    cudaGetLastError();  // clear the sticky-free error so later calls start clean
    return 0;
  }
  if (n == 0 && why) *why = "the CUDA driver reports no GPU";
  return n;
}

Device::Device(int id) : id_(id) {
  KILN_CUDA_CHECK(cudaSetDevice(id));
  KILN_CUDA_CHECK(cudaGetDeviceProperties(&props_, id));
  KILN_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
}

Device::~Device() {
  cudaSetDevice(id_);
  if (cudnn_) cudnnDestroy(cudnn_);
  if (cublas_lt_) cublasLtDestroy(cublas_lt_);
  if (stream_) cudaStreamDestroy(stream_);
}

std::string Device::describe() const {
  return fmt::format("{} (sm_{}, {:.1f} GiB)", props_.name, sm(),
                     static_cast<double>(props_.totalGlobalMem) / (1024.0 * 1024.0 * 1024.0));
}

void Device::make_current() const { KILN_CUDA_CHECK(cudaSetDevice(id_)); }

cudnnHandle_t Device::cudnn() {
  if (!cudnn_) {
    make_current();
    KILN_CUDNN_CHECK(cudnnCreate(&cudnn_));
    KILN_CUDNN_CHECK(cudnnSetStream(cudnn_, stream_));
  }
  return cudnn_;
}

cublasLtHandle_t Device::cublas_lt() {
  if (!cublas_lt_) {
    make_current();
    KILN_CUBLAS_CHECK(cublasLtCreate(&cublas_lt_));
  }
  return cublas_lt_;
}

namespace {
std::atomic<size_t> g_in_use{0}, g_peak{0};

void count_alloc(size_t bytes) {
  const size_t now = g_in_use.fetch_add(bytes) + bytes;
  size_t peak = g_peak.load();
  while (now > peak && !g_peak.compare_exchange_weak(peak, now)) {
  }
}
void count_free(size_t bytes) { g_in_use.fetch_sub(bytes); }
}  // namespace

size_t device_bytes_in_use() { return g_in_use.load(); }
size_t device_bytes_peak() { return g_peak.load(); }
void reset_device_bytes_peak() { g_peak.store(g_in_use.load()); }

DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) {
  // cudaMalloc(0) returns no pointer; keep a null buffer for empty tensors.
  if (bytes > 0) {
    KILN_CUDA_CHECK(cudaMalloc(&ptr_, bytes));
    count_alloc(bytes);
  }
}
DeviceBuffer::~DeviceBuffer() {
  if (ptr_) {
    cudaFree(ptr_);
    count_free(bytes_);
  }
}
DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept
    : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    if (ptr_) {
      cudaFree(ptr_);
      count_free(bytes_);
    }
    ptr_ = std::exchange(o.ptr_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}
void DeviceBuffer::upload(const void* host, size_t bytes) {
  if (bytes == 0) return;
  if (bytes > bytes_) throw GpuError(fmt::format("upload of {} bytes into a {}-byte device buffer", bytes, bytes_));
  KILN_CUDA_CHECK(cudaMemcpy(ptr_, host, bytes, cudaMemcpyHostToDevice));
}

PinnedBuffer::PinnedBuffer(size_t bytes) : bytes_(bytes) {
  if (bytes > 0) KILN_CUDA_CHECK(cudaMallocHost(&ptr_, bytes));
}
PinnedBuffer::~PinnedBuffer() {
  if (ptr_) cudaFreeHost(ptr_);
}
PinnedBuffer::PinnedBuffer(PinnedBuffer&& o) noexcept
    : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
PinnedBuffer& PinnedBuffer::operator=(PinnedBuffer&& o) noexcept {
  if (this != &o) {
    if (ptr_) cudaFreeHost(ptr_);
    ptr_ = std::exchange(o.ptr_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}

}  // namespace kiln::gpu
