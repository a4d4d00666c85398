#include "backends/gpu/tactic_timer.h"

#include <algorithm>

#include "backends/gpu/check.h"

namespace kiln::gpu {

float time_candidate(cudaStream_t stream, const std::function<void()>& fn, int iters) {
  cudaEvent_t start = nullptr, stop = nullptr;
  KILN_CUDA_CHECK(cudaEventCreate(&start));
  KILN_CUDA_CHECK(cudaEventCreate(&stop));
  float ms = -1;
  try {
    fn();
    KILN_CUDA_CHECK(cudaEventRecord(start, stream));
    for (int i = 0; i < iters; ++i) fn();
    KILN_CUDA_CHECK(cudaEventRecord(stop, stream));
    KILN_CUDA_CHECK(cudaEventSynchronize(stop));
    KILN_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    ms /= static_cast<float>(iters);
  } catch (const GpuError&) {
    cudaStreamSynchronize(stream);
    cudaGetLastError();
    ms = -1;
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms;
}

size_t workspace_limit() {
  size_t free_bytes = 0, total = 0;
  if (cudaMemGetInfo(&free_bytes, &total) != cudaSuccess) return 64u << 20;
  return std::min<size_t>(256u << 20, free_bytes / 8);
}

}  // namespace kiln::gpu
