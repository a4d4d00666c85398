#include <fmt/format.h>

#include <cstdio>

#include "backends/gpu/blas/lt_util.h"
#include "backends/gpu/dnn/epilogue.h"
#include "backends/gpu/tactic_timer.h"

namespace kiln::gpu::blas {
namespace {

constexpr int kCandidates = 8;

cudaDataType_t cuda_type(DType t) {
  return t == DType::kFloat16 ? CUDA_R_16F : t == DType::kBFloat16 ? CUDA_R_16BF : CUDA_R_32F;
}

EpilogueType epilogue_type(DType t) {
  return t == DType::kFloat16 ? EpilogueType::kFloat16 : t == DType::kBFloat16 ? EpilogueType::kBFloat16 : EpilogueType::kFloat32;
}

// A column-major layout of `rows` x `cols` (leading dimension rows), batched.
void make_layout(MatrixLayout& l, cudaDataType_t t, int64_t rows, int64_t cols, int64_t batch, int64_t stride) {
  KILN_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(l.out(), t, rows, cols, rows));
  if (batch > 1) {
    const int32_t b = static_cast<int32_t>(batch);
    KILN_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &b, sizeof(b)));
    KILN_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)));
  }
}

// Largest power of two (<= 256) dividing every byte offset the calls use: cuBLASLt picks
// vectorized kernels from the alignment it is promised.
uint32_t alignment_of(std::vector<int64_t> offsets, int64_t stride, size_t elem) {
  uint32_t a = 256;
  offsets.push_back(stride);
  for (int64_t o : offsets) {
    while (a > 1 && (static_cast<uint64_t>(o) * elem) % a != 0) a /= 2;
  }
  return a;
}

}  // namespace

// Row-major D[M,N] is column-major D^T[N,M] = op(B)^T op(A)^T: cuBLASLt's first operand is
// kiln's B and its second is kiln's A, each read through its stored layout.
LtMatmul::LtMatmul(Device& dev, const MatmulProblem& p, const LayerBuildOptions& opt, const std::string& node_name)
    : p_(p), handle_(dev.cublas_lt()) {
  const cudaDataType_t t = cuda_type(p.dtype);
  const bool strict = p.dtype == DType::kFloat32 && opt.precision != "tf32";
  const cublasComputeType_t compute = p.dtype != DType::kFloat32 ? CUBLAS_COMPUTE_32F
                                      : strict                   ? CUBLAS_COMPUTE_32F
                                                                 : CUBLAS_COMPUTE_32F_FAST_TF32;
  KILN_CUBLAS_CHECK(cublasLtMatmulDescCreate(op_.out(), compute, CUDA_R_32F));
  const cublasOperation_t op_first = p.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_second = p.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  KILN_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSA, &op_first, sizeof(op_first)));
  KILN_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSB, &op_second, sizeof(op_second)));
  // Stored shapes, column-major view: B is [K,N] -> N x K (or [N,K] -> K x N); A likewise.
  make_layout(a_, t, p.trans_b ? p.k : p.n, p.trans_b ? p.n : p.k, p.batch, p.stride_b);
  make_layout(b_, t, p.trans_a ? p.m : p.k, p.trans_a ? p.k : p.m, p.batch, p.stride_a);
  make_layout(c_, t, p.n, p.m, p.batch, p.stride_d);
  make_layout(d_, t, p.n, p.m, p.batch, p.stride_d);

  cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_DEFAULT;
  const bool relu = p.activation == 1, tanh_gelu = p.activation == 9 && p.act_p0 != 0;
  if (relu) epi = p.has_bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
  else if (tanh_gelu) epi = p.has_bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;  // cuBLASLt's GELU is the tanh form
  else if (p.has_bias) epi = CUBLASLT_EPILOGUE_BIAS;
  kiln_epilogue_ = p.activation != 0 && !relu && !tanh_gelu;
  KILN_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi)));

  const size_t es = dtype_size(p.dtype);
  MatmulPreference pref;
  KILN_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(pref.out()));
  const uint64_t limit = workspace_limit();
  KILN_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &limit, sizeof(limit)));
  const uint32_t al_a = alignment_of(p.call_b, p.stride_b, es), al_b = alignment_of(p.call_a, p.stride_a, es),
                 al_d = alignment_of(p.call_d, p.stride_d, es);
  KILN_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &al_a, sizeof(al_a)));
  KILN_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &al_b, sizeof(al_b)));
  KILN_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &al_d, sizeof(al_d)));
  KILN_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &al_d, sizeof(al_d)));

  cublasLtMatmulHeuristicResult_t results[kCandidates];
  int returned = 0;
  // The bias pointer is set per run; the heuristic only needs to know there is one.
  KILN_CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(handle_, op_, a_, b_, c_, d_, pref, kCandidates, results, &returned));
  if (returned == 0) {
    throw GpuError(fmt::format("{}: cuBLASLt has no algorithm for {} M={} N={} K={} batch={}", node_name,
                               dtype_name(p.dtype), p.m, p.n, p.k, p.batch));
  }
  int best = 0;
  std::string timing;
  float best_ms = -1;
  // The heuristic's list is the same for the same problem, GPU and cuBLAS version (the cache's
  // environment): the cache keeps the winner's index in it.
  const std::string cache_key = fmt::format("lt {} m{} n{} k{} t{}{} b{} s{},{},{} calls{} c{} bias{} epi{} compute{} al{},{},{}",
                                            dtype_name(p.dtype), p.m, p.n, p.k, p.trans_a ? 1 : 0, p.trans_b ? 1 : 0,
                                            p.batch, p.stride_a, p.stride_b, p.stride_d, p.call_d.size(), p.has_c ? 1 : 0,
                                            p.has_bias ? 1 : 0, static_cast<int>(epi), static_cast<int>(compute), al_a,
                                            al_b, al_d);
  bool cached = false;
  if (opt.cache) {
    if (const auto hit = opt.cache->find(cache_key)) {
      int index = -1, of = -1;
      if (std::sscanf(hit->c_str(), "candidate=%d of=%d ms=%f", &index, &of, &best_ms) == 3 && of == returned &&
          index >= 0 && index < returned) {
        best = index;
        cached = true;
        timing = " from the timing cache";
      }
    }
  }
  if (!cached && opt.time_tactics && returned > 1) {
    // Scratch operands of the real sizes (contents do not matter for timing).
    auto extent = [](const std::vector<int64_t>& offs, int64_t batch, int64_t stride, int64_t mat) {
      int64_t hi = 0;
      for (int64_t o : offs) hi = std::max(hi, o + (batch - 1) * stride + mat);
      return static_cast<size_t>(hi);
    };
    DeviceBuffer a(extent(p.call_a, p.batch, p.stride_a, p.m * p.k) * es + 256);
    DeviceBuffer b(extent(p.call_b, p.batch, p.stride_b, p.k * p.n) * es + 256);
    DeviceBuffer d(extent(p.call_d, p.batch, p.stride_d, p.m * p.n) * es + 256);
    DeviceBuffer bias(static_cast<size_t>(p.n) * es + 256);
    DeviceBuffer ws(limit);
    KILN_CUDA_CHECK(cudaMemset(a.data(), 0, a.bytes()));
    KILN_CUDA_CHECK(cudaMemset(b.data(), 0, b.bytes()));
    KILN_CUDA_CHECK(cudaMemset(bias.data(), 0, bias.bytes()));
    KILN_CUDA_CHECK(cudaDeviceSynchronize());  // the memsets ran on the legacy stream, not ours
    const MatmulPointers ptr{a.data(), b.data(), d.data(), bias.data(), d.data()};
    for (int i = 0; i < returned; ++i) {
      const float ms = time_candidate(dev.stream(), [&] { run_one(ptr, results[i].algo, ws.data(), results[i].workspaceSize, dev.stream()); });
      timing += fmt::format(" #{}={}", i, ms >= 0 ? fmt::format("{:.4f}ms", ms) : "failed");
      if (ms >= 0 && (best_ms < 0 || ms < best_ms)) {
        best_ms = ms;
        best = i;
      }
    }
    if (best_ms < 0) throw GpuError(fmt::format("{}: every cuBLASLt candidate failed to run ({})", node_name, timing));
    if (opt.cache) opt.cache->put(cache_key, fmt::format("candidate={} of={} ms={}", best, returned, best_ms));
  }
  algo_ = results[best].algo;
  ws_bytes_ = results[best].workspaceSize;
  tactic_ = fmt::format("cublasLt {} M={} N={} K={} batch={}x{} candidate {}/{}{}{}{}", dtype_name(p.dtype), p.m, p.n,
                        p.k, p.batch, p.call_d.size(), best, returned, strict ? " strict-fp32" : "",
                        kiln_epilogue_ ? " + kiln epilogue" : "",
                        best_ms >= 0 ? fmt::format(", {:.4f} ms", best_ms) : "");
  if (opt.verbose) std::fprintf(stderr, "kiln: %s: %s;%s\n", node_name.c_str(), tactic_.c_str(), timing.c_str());
}

void LtMatmul::run_one(const MatmulPointers& ptr, const cublasLtMatmulAlgo_t& algo, void* ws, size_t ws_bytes,
                       cudaStream_t stream) const {
  const size_t es = dtype_size(p_.dtype);
  if (p_.has_bias) {
    KILN_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &ptr.bias, sizeof(ptr.bias)));
  }
  const float beta = p_.has_c ? p_.beta : 0.0f;
  for (size_t i = 0; i < p_.call_d.size(); ++i) {
    const char* a = static_cast<const char*>(ptr.a) + p_.call_a[i] * es;
    const char* b = static_cast<const char*>(ptr.b) + p_.call_b[i] * es;
    char* d = static_cast<char*>(ptr.d) + p_.call_d[i] * es;
    const char* c = p_.has_c ? static_cast<const char*>(ptr.c) + p_.call_d[i] * es : d;
    KILN_CUBLAS_CHECK(cublasLtMatmul(handle_, op_, &p_.alpha, b, a_, a, b_, &beta, c, c_, d, d_, &algo, ws, ws_bytes, stream));
  }
  if (kiln_epilogue_) {
    EpilogueParams e;
    e.activation = p_.activation;
    e.p0 = p_.act_p0;
    e.p1 = p_.act_p1;
    e.n = p_.m * p_.n * p_.batch * static_cast<int64_t>(p_.call_d.size());
    e.channels = p_.n;
    launch_epilogue(epilogue_type(p_.dtype), e, ptr.d, nullptr, nullptr, stream);
  }
}

void LtMatmul::run(const MatmulPointers& ptr, void* workspace, cudaStream_t stream) const {
  run_one(ptr, algo_, workspace, ws_bytes_, stream);
}

}  // namespace kiln::gpu::blas
