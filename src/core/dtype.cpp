#include "kiln/dtype.h"

#include <array>

namespace kiln {
namespace {

struct DTypeInfo {
  DType type;
  const char* name;
  size_t size;
  int onnx;  // TensorProto.DataType
};

constexpr std::array<DTypeInfo, 16> kInfo = {{
    {DType::kUndefined, "undefined", 0, 0},
    {DType::kFloat32, "float32", 4, 1},
    {DType::kFloat64, "float64", 8, 11},
    {DType::kFloat16, "float16", 2, 10},
    {DType::kBFloat16, "bfloat16", 2, 16},
    {DType::kFloat8E4M3FN, "float8e4m3fn", 1, 17},
    {DType::kFloat8E5M2, "float8e5m2", 1, 19},
    {DType::kInt8, "int8", 1, 3},
    {DType::kInt16, "int16", 2, 5},
    {DType::kInt32, "int32", 4, 6},
    {DType::kInt64, "int64", 8, 7},
    {DType::kUInt8, "uint8", 1, 2},
    {DType::kUInt16, "uint16", 2, 4},
    {DType::kUInt32, "uint32", 4, 12},
    {DType::kUInt64, "uint64", 8, 13},
    {DType::kBool, "bool", 1, 9},
}};

const DTypeInfo& info(DType t) { return kInfo.at(static_cast<size_t>(t)); }

}  // namespace

size_t dtype_size(DType t) { return info(t).size; }
const char* dtype_name(DType t) { return info(t).name; }

bool dtype_is_float(DType t) {
  switch (t) {
    case DType::kFloat32:
    case DType::kFloat64:
    case DType::kFloat16:
    case DType::kBFloat16:
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E5M2:
      return true;
    default:
      return false;
  }
}

bool dtype_is_integer(DType t) {
  switch (t) {
    case DType::kInt8:
    case DType::kInt16:
    case DType::kInt32:
    case DType::kInt64:
    case DType::kUInt8:
    case DType::kUInt16:
    case DType::kUInt32:
    case DType::kUInt64:
      return true;
    default:
      return false;
  }
}

bool dtype_is_signed(DType t) {
  return dtype_is_float(t) || t == DType::kInt8 || t == DType::kInt16 || t == DType::kInt32 ||
         t == DType::kInt64;
}

DType dtype_from_onnx(int onnx_type) {
  for (const auto& i : kInfo) {
    if (i.onnx == onnx_type && i.type != DType::kUndefined) return i.type;
  }
  return DType::kUndefined;
}

int dtype_to_onnx(DType t) { return info(t).onnx; }

DType dtype_from_name(const std::string& name) {
  for (const auto& i : kInfo) {
    if (name == i.name) return i.type;
  }
  return DType::kUndefined;
}

}  // namespace kiln
