// Element types of kiln tensors; the set mirrors the ONNX types kiln supports.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace kiln {

enum class DType : uint8_t {
  kUndefined = 0,
  kFloat32,
  kFloat64,
  kFloat16,
  kBFloat16,
  kFloat8E4M3FN,
  kFloat8E5M2,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kUInt8,
  kUInt16,
  kUInt32,
  kUInt64,
  kBool,
};

size_t dtype_size(DType t);
const char* dtype_name(DType t);  // "float32", "float16", "int64", ...
bool dtype_is_float(DType t);     // any floating type, including fp8
bool dtype_is_integer(DType t);   // signed or unsigned integers (not bool)
bool dtype_is_signed(DType t);
// ONNX TensorProto.DataType <-> DType; kUndefined when kiln does not support it.
DType dtype_from_onnx(int onnx_type);
int dtype_to_onnx(DType t);
// Parses the names dtype_name prints; kUndefined when unknown.
DType dtype_from_name(const std::string& name);

}  // namespace kiln
