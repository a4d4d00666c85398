// The FusedElementwise interpreter: per element, load the inputs into float registers, run the
// program (a switch over the same ew_apply the single-op kernels use), store the outputs.
#include "backends/gpu/check.h"
#include "backends/gpu/kernels/device_types.cuh"
#include "backends/gpu/kernels/ew_ops.cuh"
#include "backends/gpu/kernels/fused.h"

namespace kiln::gpu::kern {
namespace {

__device__ __forceinline__ float eval(const FusedInstr& in, float a, float b, float c) {
  switch (in.extra) {
    case FusedExtra::kNone: break;
    case FusedExtra::kCopy: return a;
    case FusedExtra::kRoundHalf: return __half2float(__float2half_rn(a));
    case FusedExtra::kRoundBf16: return __bfloat162float(__float2bfloat16_rn(a));
    case FusedExtra::kIsNaN: return a != a ? 1.0f : 0.0f;
  }
  const EwParams p{in.p0, in.p1};
  switch (in.op) {
#define KILN_CASE(name) \
  case EwOp::k##name: return static_cast<float>(ew_apply<EwOp::k##name, float>(a, b, p));
    KILN_EW_FLOAT_UNARY(KILN_CASE)
    KILN_EW_NUM_UNARY(KILN_CASE)
    KILN_EW_FLOAT_BINARY(KILN_CASE)
    KILN_EW_NUM_BINARY(KILN_CASE)
    KILN_EW_COMPARE(KILN_CASE)
#undef KILN_CASE
    // Logic ops on 0/1 floats (comparisons leave 1.0 for true).
    case EwOp::kNot: return a == 0.0f ? 1.0f : 0.0f;
    case EwOp::kAnd: return (a != 0.0f && b != 0.0f) ? 1.0f : 0.0f;
    case EwOp::kOr: return (a != 0.0f || b != 0.0f) ? 1.0f : 0.0f;
    case EwOp::kXor: return ((a != 0.0f) != (b != 0.0f)) ? 1.0f : 0.0f;
    case EwOp::kWhere: return a != 0.0f ? b : c;
    default: return 0.0f;
  }
}

__device__ __forceinline__ float load(FusedType t, const void* p, int64_t i) {
  switch (t) {
    case FusedType::kF16: return __half2float(static_cast<const half*>(p)[i]);
    case FusedType::kBF16: return __bfloat162float(static_cast<const bf16*>(p)[i]);
    case FusedType::kBool: return static_cast<const bool*>(p)[i] ? 1.0f : 0.0f;
    default: return static_cast<const float*>(p)[i];
  }
}

__device__ __forceinline__ void store(FusedType t, void* p, int64_t i, float v) {
  switch (t) {
    case FusedType::kF16: static_cast<half*>(p)[i] = __float2half_rn(v); break;
    case FusedType::kBF16: static_cast<bf16*>(p)[i] = __float2bfloat16_rn(v); break;
    case FusedType::kBool: static_cast<bool*>(p)[i] = v != 0.0f; break;
    default: static_cast<float*>(p)[i] = v;
  }
}

// Registers live in a small local array indexed at run time (an interpreter cannot unroll
// them into named registers); it stays in L1, far below the cost of the memory traffic.
// Loads and stores switch on each tensor's type (uniform across the grid).
template <bool kContiguous>
__global__ void fused_kernel(FusedProgram prog, FusedPointers ptrs, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  float r[kFusedMaxRegs];
  for (int k = 0; k < prog.num_imms; ++k) r[prog.num_inputs + k] = prog.imms[k];
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    if constexpr (kContiguous) {
      for (int k = 0; k < prog.num_inputs; ++k) r[k] = load(prog.in_type[k], ptrs.in[k], i * prog.step[k]);
    } else {
      int64_t off[kFusedMaxInputs];
      prog.bc.offsets(i, off);
      for (int k = 0; k < prog.num_inputs; ++k) r[k] = load(prog.in_type[k], ptrs.in[k], off[k]);
    }
    for (int pc = 0; pc < prog.num_instrs; ++pc) {
      const FusedInstr& in = prog.code[pc];
      r[in.dst] = eval(in, r[in.a], r[in.b], r[in.c]);
    }
    for (int o = 0; o < prog.num_outputs; ++o) store(prog.out_type, ptrs.out[o], i, r[prog.out_reg[o]]);
  }
}

}  // namespace

bool fused_type_of(DType t, FusedType* out) {
  switch (t) {
    case DType::kFloat32: *out = FusedType::kF32; return true;
    case DType::kFloat16: *out = FusedType::kF16; return true;
    case DType::kBFloat16: *out = FusedType::kBF16; return true;
    case DType::kBool: *out = FusedType::kBool; return true;
    default: return false;
  }
}

void launch_fused(const FusedProgram& prog, const FusedPointers& ptrs, int64_t n, cudaStream_t st) {
  if (n == 0) return;
  constexpr int kThreads = 256;
  if (prog.contiguous) {
    fused_kernel<true><<<grid_for(n, kThreads), kThreads, 0, st>>>(prog, ptrs, n);
  } else {
    fused_kernel<false><<<grid_for(n, kThreads), kThreads, 0, st>>>(prog, ptrs, n);
  }
  KILN_CUDA_CHECK_LAUNCH();
}

}  // namespace kiln::gpu::kern
