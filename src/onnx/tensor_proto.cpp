#include "onnx/tensor_proto.h"

#include <onnx/onnx_pb.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/dispatch.h"
#include "core/error.h"

namespace kiln::onnx_io {
namespace {

Status read_external(const onnx::TensorProto& p, const std::string& base_dir, Tensor* t) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& kv : p.external_data()) {
    if (kv.key() == "location") location = kv.value();
    if (kv.key() == "offset") offset = std::stoll(kv.value());
    if (kv.key() == "length") length = std::stoll(kv.value());
  }
  if (location.empty()) return invalid_model("tensor '{}' has external data without a location", p.name());
  const std::filesystem::path path = std::filesystem::path(base_dir) / location;
  std::ifstream f(path, std::ios::binary);
  if (!f) return not_found("external data file '{}' of tensor '{}' cannot be opened", path.string(), p.name());
  f.seekg(0, std::ios::end);
  const int64_t file_size = f.tellg();
  const auto need = static_cast<int64_t>(t->nbytes());
  if (length >= 0 && length != need) {
    return invalid_model("tensor '{}': external data length {} but the shape needs {} bytes", p.name(), length, need);
  }
  if (offset < 0 || offset + need > file_size) {
    return invalid_model("tensor '{}': external data [{}, {}) is beyond the end of '{}' ({} bytes)", p.name(),
                         offset, offset + need, path.string(), file_size);
  }
  f.seekg(offset);
  f.read(static_cast<char*>(t->data()), need);
  if (!f) return invalid_model("tensor '{}': reading external data from '{}' failed", p.name(), path.string());
  return Status::OK();
}

// Copies a typed repeated field into the tensor, converting each element to T.
template <class T, class Field>
Status copy_field(const Field& field, const onnx::TensorProto& p, Tensor* t, bool bits16 = false) {
  if (field.size() != t->numel()) {
    return invalid_model("tensor '{}' holds {} values but its shape {} needs {}", p.name(), field.size(),
                         shape_to_string(t->shape()), t->numel());
  }
  T* out = t->data_as<T>();
  for (int i = 0; i < field.size(); ++i) {
    if constexpr (is_small_float_v<T>) {
      // fp16/bf16/fp8 are stored as their bit patterns in int32_data.
      out[i].bits = static_cast<decltype(out[i].bits)>(field.Get(i));
    } else {
      out[i] = static_cast<T>(field.Get(i));
    }
  }
  (void)bits16;
  return Status::OK();
}

}  // namespace

Status tensor_from_proto(const onnx::TensorProto& p, const std::string& base_dir, Tensor* out) {
  const DType dt = dtype_from_onnx(p.data_type());
  if (dt == DType::kUndefined) {
    return unsupported("tensor '{}' has ONNX data type {}, which kiln does not support", p.name(), p.data_type());
  }
  if (p.has_segment()) return unsupported("tensor '{}' is segmented", p.name());
  std::vector<int64_t> shape(p.dims().begin(), p.dims().end());
  for (int64_t d : shape) {
    if (d < 0) return invalid_model("tensor '{}' has a negative dimension {}", p.name(), d);
  }
  double elems = 1;
  for (int64_t d : shape) elems *= static_cast<double>(d);
  if (elems * static_cast<double>(dtype_size(dt)) > 64.0 * (1ull << 30)) {
    return invalid_model("tensor '{}' claims an implausible size {}", p.name(), shape_to_string(shape));
  }
  // Every byte is written below (external data, raw data or the typed field); no zero-fill.
  Tensor t = Tensor::uninitialized(dt, shape);
  if (p.data_location() == onnx::TensorProto::EXTERNAL) {
    KILN_RETURN_IF_ERROR(read_external(p, base_dir, &t));
    *out = std::move(t);
    return Status::OK();
  }
  if (p.has_raw_data()) {
    if (p.raw_data().size() != t.nbytes()) {
      return invalid_model("tensor '{}' has {} raw bytes but {} {} needs {}", p.name(), p.raw_data().size(),
                           dtype_name(dt), shape_to_string(shape), t.nbytes());
    }
    if (t.nbytes() > 0) std::memcpy(t.data(), p.raw_data().data(), t.nbytes());
    *out = std::move(t);
    return Status::OK();
  }
  Status s;
  switch (dt) {
    case DType::kFloat32: s = copy_field<float>(p.float_data(), p, &t); break;
    case DType::kFloat64: s = copy_field<double>(p.double_data(), p, &t); break;
    case DType::kInt64: s = copy_field<int64_t>(p.int64_data(), p, &t); break;
    case DType::kUInt32: s = copy_field<uint32_t>(p.uint64_data(), p, &t); break;
    case DType::kUInt64: s = copy_field<uint64_t>(p.uint64_data(), p, &t); break;
    case DType::kInt32: s = copy_field<int32_t>(p.int32_data(), p, &t); break;
    case DType::kInt16: s = copy_field<int16_t>(p.int32_data(), p, &t); break;
    case DType::kInt8: s = copy_field<int8_t>(p.int32_data(), p, &t); break;
    case DType::kUInt16: s = copy_field<uint16_t>(p.int32_data(), p, &t); break;
    case DType::kUInt8: s = copy_field<uint8_t>(p.int32_data(), p, &t); break;
    case DType::kBool: s = copy_field<bool>(p.int32_data(), p, &t); break;
    case DType::kFloat16: s = copy_field<float16>(p.int32_data(), p, &t); break;
    case DType::kBFloat16: s = copy_field<bfloat16>(p.int32_data(), p, &t); break;
    case DType::kFloat8E4M3FN: s = copy_field<float8e4m3fn>(p.int32_data(), p, &t); break;
    case DType::kFloat8E5M2: s = copy_field<float8e5m2>(p.int32_data(), p, &t); break;
    case DType::kUndefined: break;
  }
  KILN_RETURN_IF_ERROR(s);
  *out = std::move(t);
  return Status::OK();
}

void tensor_to_proto(const Tensor& t, const std::string& name, onnx::TensorProto* p) {
  p->Clear();
  p->set_name(name);
  p->set_data_type(dtype_to_onnx(t.dtype()));
  for (int64_t d : t.shape()) p->add_dims(d);
  p->set_raw_data(t.data(), t.nbytes());
}

}  // namespace kiln::onnx_io
