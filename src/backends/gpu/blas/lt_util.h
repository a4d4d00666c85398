// RAII owners of cuBLASLt descriptors, and the one matmul kiln's Gemm/MatMul layers describe:
// row-major D[M,N] = act(alpha * op(A)[M,K] op(B)[K,N] + beta * C + bias[N]), batched.
#pragma once
#include <string>
#include <vector>

#include "backends/gpu/check.h"
#include "backends/gpu/device.h"
#include "backends/gpu/layer.h"

namespace kiln::gpu::blas {

template <class H, cublasStatus_t (*Destroy)(H)>
class LtHandle {
 public:
  LtHandle() = default;
  ~LtHandle() {
    if (h_) Destroy(h_);
  }
  LtHandle(const LtHandle&) = delete;
  LtHandle& operator=(const LtHandle&) = delete;
  H* out() { return &h_; }
  operator H() const { return h_; }  // NOLINT(google-explicit-constructor)

 private:
  H h_ = nullptr;
};
using MatmulDesc = LtHandle<cublasLtMatmulDesc_t, cublasLtMatmulDescDestroy>;
using MatrixLayout = LtHandle<cublasLtMatrixLayout_t, cublasLtMatrixLayoutDestroy>;
using MatmulPreference = LtHandle<cublasLtMatmulPreference_t, cublasLtMatmulPreferenceDestroy>;

struct MatmulProblem {
  DType dtype = DType::kFloat32;
  int64_t m = 0, n = 0, k = 0;
  bool trans_a = false, trans_b = false;  // A stored [K,M] / B stored [N,K]
  float alpha = 1, beta = 0;
  bool has_c = false;     // beta * C with C a full [M,N] matrix (per batch: stride like D)
  bool has_bias = false;  // bias[N] through the cuBLASLt epilogue
  int activation = 0;     // ops::ActivationKind; Relu and tanh-Gelu fuse, others use kiln's epilogue
  float act_p0 = 0, act_p1 = 0;
  // One call per entry: element offsets of A, B and D (C follows D) for each batch group, and
  // within a call `batch` matrices with these element strides (0 = broadcast).
  int64_t batch = 1, stride_a = 0, stride_b = 0, stride_d = 0;
  std::vector<int64_t> call_a, call_b, call_d;
};

// Pointers for one run; bias may be null when !has_bias, c when !has_c.
struct MatmulPointers {
  const void* a = nullptr;
  const void* b = nullptr;
  const void* c = nullptr;
  const void* bias = nullptr;
  void* d = nullptr;
};

class LtMatmul {
 public:
  // Describes the problem, asks the heuristic for candidates and (with time_tactics) keeps the
  // fastest on scratch buffers. Throws GpuError when cuBLASLt has no algorithm.
  LtMatmul(Device& dev, const MatmulProblem& p, const LayerBuildOptions& opt, const std::string& node_name);
  void run(const MatmulPointers& ptr, void* workspace, cudaStream_t stream) const;
  size_t workspace_bytes() const { return ws_bytes_; }
  const std::string& tactic() const { return tactic_; }

 private:
  void run_one(const MatmulPointers& ptr, const cublasLtMatmulAlgo_t& algo, void* ws, size_t ws_bytes,
               cudaStream_t stream) const;

  MatmulProblem p_;
  cublasLtHandle_t handle_ = nullptr;
  MatmulDesc op_;
  MatrixLayout a_, b_, c_, d_;
  cublasLtMatmulAlgo_t algo_{};
  size_t ws_bytes_ = 0;
  bool kiln_epilogue_ = false;
  std::string tactic_;
};

}  // namespace kiln::gpu::blas
