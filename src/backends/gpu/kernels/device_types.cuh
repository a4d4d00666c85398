// Device-side element types: the CUDA type of each kiln DType, conversions between them
// (through float for fp16/bf16/fp8, as the CPU reference does), and a dispatch from a
// run-time DType to a kernel template over a compile-time list of types.
#pragma once
#include <cuda_fp8.h>

#include <cstdint>
#include <type_traits>

#include "backends/gpu/vendors/cuda.h"
#include "kiln/dtype.h"

namespace kiln::gpu::kern {

using half = __half;
using bf16 = __nv_bfloat16;
using fp8e4m3 = __nv_fp8_e4m3;

template <class... Ts>
struct Types {};
using FloatTypes = Types<float, half, bf16>;
using NumTypes = Types<float, half, bf16, int32_t, int64_t>;
using SignedTypes = NumTypes;
using BoolTypes = Types<bool>;
// Every type Cast, the data-movement layers and Where handle.
using AnyTypes = Types<float, half, bf16, double, int8_t, uint8_t, int16_t, int32_t, int64_t, bool>;

template <class T>
constexpr bool is_low_float_v = std::is_same_v<T, half> || std::is_same_v<T, bf16> || std::is_same_v<T, fp8e4m3>;

// Arithmetic happens in float for fp16/bf16 (as on the CPU), natively otherwise.
template <class T>
using compute_t = std::conditional_t<is_low_float_v<T>, float, T>;

template <class T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, float>) return DType::kFloat32;
  else if constexpr (std::is_same_v<T, double>) return DType::kFloat64;
  else if constexpr (std::is_same_v<T, half>) return DType::kFloat16;
  else if constexpr (std::is_same_v<T, bf16>) return DType::kBFloat16;
  else if constexpr (std::is_same_v<T, fp8e4m3>) return DType::kFloat8E4M3FN;
  else if constexpr (std::is_same_v<T, int8_t>) return DType::kInt8;
  else if constexpr (std::is_same_v<T, uint8_t>) return DType::kUInt8;
  else if constexpr (std::is_same_v<T, int16_t>) return DType::kInt16;
  else if constexpr (std::is_same_v<T, int32_t>) return DType::kInt32;
  else if constexpr (std::is_same_v<T, int64_t>) return DType::kInt64;
  else if constexpr (std::is_same_v<T, bool>) return DType::kBool;
  else static_assert(!sizeof(T), "no kiln dtype");
}

template <class T>
__device__ __forceinline__ float to_float(T v) {
  if constexpr (std::is_same_v<T, half>) return __half2float(v);
  else if constexpr (std::is_same_v<T, bf16>) return __bfloat162float(v);
  else if constexpr (std::is_same_v<T, fp8e4m3>) return static_cast<float>(v);
  else return static_cast<float>(v);
}

// Converts between any two element types (float -> int truncates, like static_cast on the CPU;
// to bool is "non-zero").
template <class To, class From>
__device__ __forceinline__ To cvt(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (is_low_float_v<From>) {
    return cvt<To>(to_float(v));
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (std::is_same_v<To, half>) {
    if constexpr (std::is_same_v<From, double>) return __double2half(v);
    else return __float2half_rn(static_cast<float>(v));
  } else if constexpr (std::is_same_v<To, bf16>) {
    if constexpr (std::is_same_v<From, double>) return __double2bfloat16(v);
    else return __float2bfloat16_rn(static_cast<float>(v));
  } else if constexpr (std::is_same_v<To, fp8e4m3>) {
    fp8e4m3 r;
    r.__x = __nv_cvt_float_to_fp8(static_cast<float>(v), __NV_SATFINITE, __NV_E4M3);
    return r;
  } else {
    return static_cast<To>(v);
  }
}

// Calls f(T{}) (a value of the device type) for `t` when T is in the list; false otherwise.
template <class F, class... Ts>
bool dispatch(DType t, Types<Ts...>, F&& f) {
  return ((dtype_of<Ts>() == t ? (f(Ts{}), true) : false) || ...);
}

// A grid for a grid-stride loop over n items: enough blocks to fill the GPU several times,
// never more (the loop covers the rest).
inline unsigned grid_for(int64_t n, int threads) {
  const int64_t blocks = (n + threads - 1) / threads;
  const int64_t cap = 132 * 16;  // H200: 132 SMs, up to 16 resident blocks each
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > cap ? cap : blocks));
}

// 16 bytes of T (or fewer when T is wider), loaded and stored as one access.
template <class T, int N>
struct alignas(sizeof(T) * N) Vec {
  T v[N];
};

inline bool aligned(const void* p, size_t a) { return reinterpret_cast<uintptr_t>(p) % a == 0; }

}  // namespace kiln::gpu::kern
