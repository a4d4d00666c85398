// Maps DType to C++ element types and dispatches templated code over a set of dtypes,
// so one kernel template serves every type its op allows.
#pragma once
#include <cstdint>
#include <type_traits>

#include "core/numeric.h"
#include "kiln/dtype.h"

namespace kiln {

template <class T>
struct Tag {
  using type = T;
};

template <class... Ts>
struct TypeList {};

template <class T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, float>) return DType::kFloat32;
  else if constexpr (std::is_same_v<T, double>) return DType::kFloat64;
  else if constexpr (std::is_same_v<T, float16>) return DType::kFloat16;
  else if constexpr (std::is_same_v<T, bfloat16>) return DType::kBFloat16;
  else if constexpr (std::is_same_v<T, float8e4m3fn>) return DType::kFloat8E4M3FN;
  else if constexpr (std::is_same_v<T, float8e5m2>) return DType::kFloat8E5M2;
  else if constexpr (std::is_same_v<T, int8_t>) return DType::kInt8;
  else if constexpr (std::is_same_v<T, int16_t>) return DType::kInt16;
  else if constexpr (std::is_same_v<T, int32_t>) return DType::kInt32;
  else if constexpr (std::is_same_v<T, int64_t>) return DType::kInt64;
  else if constexpr (std::is_same_v<T, uint8_t>) return DType::kUInt8;
  else if constexpr (std::is_same_v<T, uint16_t>) return DType::kUInt16;
  else if constexpr (std::is_same_v<T, uint32_t>) return DType::kUInt32;
  else if constexpr (std::is_same_v<T, uint64_t>) return DType::kUInt64;
  else if constexpr (std::is_same_v<T, bool>) return DType::kBool;
  else static_assert(!sizeof(T), "not a kiln element type");
}

using Fp8Types = TypeList<float8e4m3fn, float8e5m2>;
using IeeeFloatTypes = TypeList<float, double, float16, bfloat16>;  // what math ops accept
using FloatTypes = TypeList<float, double, float16, bfloat16, float8e4m3fn, float8e5m2>;
using SignedIntTypes = TypeList<int8_t, int16_t, int32_t, int64_t>;
using IntTypes = TypeList<int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t>;
// Types ONNX arithmetic ops (Add, Mul, Max...) accept.
using NumericTypes = TypeList<float, double, float16, bfloat16, int8_t, int16_t, int32_t, int64_t, uint8_t,
                              uint16_t, uint32_t, uint64_t>;
using AllTypes = TypeList<float, double, float16, bfloat16, float8e4m3fn, float8e5m2, int8_t, int16_t,
                          int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t, bool>;

namespace dispatch_detail {
template <class F, class... Ts>
bool run(DType t, F&& f, TypeList<Ts...>) {
  return ((dtype_of<Ts>() == t ? (f(Tag<Ts>{}), true) : false) || ...);
}
}  // namespace dispatch_detail

// Calls f(Tag<T>{}) for the C++ type T of `t` if T is in List; returns false (and calls
// nothing) when `t` is not in List, so the caller can report an unsupported dtype.
template <class List, class F>
bool dispatch(DType t, F&& f) {
  return dispatch_detail::run(t, f, List{});
}

// Element conversion between any two kiln element types, through double for floats.
template <class To, class From>
inline To convert(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (is_small_float_v<To>) {
    return To(static_cast<float>(static_cast<compute_t<From>>(v)));
  } else if constexpr (is_small_float_v<From>) {
    return static_cast<To>(static_cast<float>(v));
  } else {
    return static_cast<To>(v);
  }
}

}  // namespace kiln
