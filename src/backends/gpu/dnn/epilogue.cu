#include "backends/gpu/check.h"
#include "backends/gpu/dnn/epilogue.h"

namespace kiln::gpu {
namespace {

__device__ __forceinline__ float to_f(float x) { return x; }
__device__ __forceinline__ float to_f(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_f(__nv_bfloat16 x) { return __bfloat162float(x); }
template <class T>
__device__ __forceinline__ T from_f(float x);
template <>
__device__ __forceinline__ float from_f<float>(float x) { return x; }
template <>
__device__ __forceinline__ __half from_f<__half>(float x) { return __float2half_rn(x); }
template <>
__device__ __forceinline__ __nv_bfloat16 from_f<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }

// Mirrors ops::Activation::apply (src/ops/activation.h), the CPU reference.
__device__ __forceinline__ float activate(int kind, float p0, float p1, float x) {
  switch (kind) {
    case 1: return x > 0.f ? x : 0.f;                              // Relu
    case 2: return x < p0 ? p0 : (x > p1 ? p1 : x);                // Clip
    case 3: return x >= 0.f ? x : p0 * x;                          // LeakyRelu
    case 4: return 1.f / (1.f + expf(-x));                         // Sigmoid
    case 5: return fmaxf(0.f, fminf(1.f, p0 * x + p1));            // HardSigmoid
    case 6: return x * fmaxf(0.f, fminf(1.f, x / 6.f + 0.5f));     // HardSwish
    case 7: return x / (1.f + expf(-x));                           // Silu
    case 8: return tanhf(x);                                       // Tanh
    case 9:                                                        // Gelu
      if (p0 != 0.f) return 0.5f * x * (1.f + tanhf(0.7978845608028654f * (x + 0.044715f * x * x * x)));
      return 0.5f * x * (1.f + erff(x * 0.7071067811865476f));
    default: return x;
  }
}

template <class T>
__global__ void epilogue_kernel(EpilogueParams p, T* y, const T* bias, const T* z) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < p.n; i += stride) {
    float v = to_f(y[i]);
    if (bias) v += to_f(bias[(i / p.inner) % p.channels]);
    if (z) v += to_f(z[i]);
    y[i] = from_f<T>(activate(p.activation, p.p0, p.p1, v));
  }
}

template <class T>
void launch(const EpilogueParams& p, void* y, const void* bias, const void* z, cudaStream_t stream) {
  constexpr int kThreads = 256;
  const int64_t blocks = (p.n + kThreads - 1) / kThreads;
  const unsigned grid = static_cast<unsigned>(blocks < 65535 * 8 ? blocks : 65535 * 8);
  epilogue_kernel<T><<<grid, kThreads, 0, stream>>>(p, static_cast<T*>(y), static_cast<const T*>(bias),
                                                    static_cast<const T*>(z));
  KILN_CUDA_CHECK_LAUNCH();
}

}  // namespace

void launch_epilogue(EpilogueType t, const EpilogueParams& p, void* y, const void* bias, const void* z,
                     cudaStream_t stream) {
  if (p.n == 0) return;
  switch (t) {
    case EpilogueType::kFloat32: launch<float>(p, y, bias, z, stream); break;
    case EpilogueType::kFloat16: launch<__half>(p, y, bias, z, stream); break;
    case EpilogueType::kBFloat16: launch<__nv_bfloat16>(p, y, bias, z, stream); break;
  }
}

}  // namespace kiln::gpu
