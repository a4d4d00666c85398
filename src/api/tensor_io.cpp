#include "kiln/tensor_io.h"

#include <onnx/onnx_pb.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "core/error.h"
#include "core/file_util.h"
#include "onnx/tensor_proto.h"

namespace kiln {
namespace {

struct NpyType {
  DType dtype;
  const char* descr;
};

constexpr NpyType kNpyTypes[] = {
    {DType::kFloat32, "<f4"}, {DType::kFloat64, "<f8"}, {DType::kFloat16, "<f2"}, {DType::kInt8, "|i1"},
    {DType::kInt16, "<i2"},   {DType::kInt32, "<i4"},   {DType::kInt64, "<i8"},   {DType::kUInt8, "|u1"},
    {DType::kUInt16, "<u2"},  {DType::kUInt32, "<u4"},  {DType::kUInt64, "<u8"},  {DType::kBool, "|b1"},
};

Status parse_npy(const std::string& bytes, const std::string& path, Tensor* out) {
  auto bad = [&](const std::string& why) { return invalid_argument("'{}' is not a valid .npy file: {}", path, why); };
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) return bad("missing magic");
  const int major = static_cast<uint8_t>(bytes[6]);
  size_t header_len = 0, offset = 0;
  if (major == 1) {
    header_len = static_cast<uint8_t>(bytes[8]) | (static_cast<uint8_t>(bytes[9]) << 8);
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return bad("truncated header");
    uint32_t len;
    std::memcpy(&len, bytes.data() + 8, 4);
    header_len = len;
    offset = 12;
  } else {
    return bad("unknown version " + std::to_string(major));
  }
  if (offset + header_len > bytes.size()) return bad("truncated header");
  const std::string header = bytes.substr(offset, header_len);
  std::smatch m;
  if (!std::regex_search(header, m, std::regex(R"('descr'\s*:\s*'([^']+)')"))) return bad("no descr");
  const std::string descr = m[1];
  DType dt = DType::kUndefined;
  for (const auto& t : kNpyTypes) {
    if (descr == t.descr || (descr.size() == 3 && descr.substr(1) == std::string(t.descr).substr(1) &&
                             (descr[0] == '=' || descr[0] == '|' || descr[0] == '<'))) {
      dt = t.dtype;
    }
  }
  if (dt == DType::kUndefined) return unsupported("'{}': .npy element type '{}' is not supported", path, descr);
  if (std::regex_search(header, std::regex(R"('fortran_order'\s*:\s*True)"))) {
    return unsupported("'{}': Fortran-ordered .npy arrays are not supported", path);
  }
  if (!std::regex_search(header, m, std::regex(R"('shape'\s*:\s*\(([^)]*)\))"))) return bad("no shape");
  std::vector<int64_t> shape;
  std::stringstream dims(m[1].str());
  std::string item;
  while (std::getline(dims, item, ',')) {
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \tL") + 1);
    if (item.empty()) continue;
    try {
      shape.push_back(std::stoll(item));
    } catch (const std::exception&) {
      return bad("bad dimension '" + item + "'");
    }
    if (shape.back() < 0) return bad("negative dimension");
  }
  const size_t data_off = offset + header_len;
  double need = static_cast<double>(dtype_size(dt));
  for (int64_t d : shape) need *= static_cast<double>(d);
  if (need != static_cast<double>(bytes.size() - data_off)) {
    return bad(fmt::format("data is {} bytes but shape {} of {} needs {}", bytes.size() - data_off,
                           shape_to_string(shape), dtype_name(dt), need));
  }
  Tensor t(dt, shape);
  if (t.nbytes()) std::memcpy(t.data(), bytes.data() + data_off, t.nbytes());
  *out = std::move(t);
  return Status::OK();
}

}  // namespace

Status read_tensor_file(const std::string& path, Tensor* out, std::string* name) {
  std::string bytes;
  KILN_RETURN_IF_ERROR(read_file_bytes(path, "tensor file", &bytes));
  if (name) name->clear();
  const std::string ext = std::filesystem::path(path).extension().string();
  if (ext == ".npy") return parse_npy(bytes, path, out);
  if (ext == ".pb") {
    onnx::TensorProto p;
    if (bytes.empty() || !p.ParseFromString(bytes)) {
      return invalid_argument("'{}' is not a valid TensorProto .pb file", path);
    }
    if (p.has_data_type() == false) return invalid_argument("'{}' is not a valid TensorProto .pb file (no data type)", path);
    if (name) *name = p.name();
    const std::string dir = std::filesystem::path(path).parent_path().string();
    return onnx_io::tensor_from_proto(p, dir.empty() ? "." : dir, out).with_context(path);
  }
  return invalid_argument("'{}': unknown tensor file type '{}' (expected .npy or .pb)", path, ext);
}

Status write_npy(const std::string& path, const Tensor& t) {
  const char* descr = nullptr;
  for (const auto& n : kNpyTypes) {
    if (n.dtype == t.dtype()) descr = n.descr;
  }
  if (!descr) return unsupported("cannot write {} as .npy", dtype_name(t.dtype()));
  std::string shape;
  for (int64_t d : t.shape()) shape += std::to_string(d) + ",";
  if (t.rank() > 1) shape.pop_back();
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}", descr, shape);
  // Pad so the data starts on a 64-byte boundary, as numpy does.
  const size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::ofstream f(path, std::ios::binary);
  if (!f) return not_found("cannot write '{}'", path);
  const uint16_t len = static_cast<uint16_t>(header.size());
  f.write("\x93NUMPY\x01\x00", 8);
  f.put(static_cast<char>(len & 0xFF));
  f.put(static_cast<char>(len >> 8));
  f << header;
  f.write(static_cast<const char*>(t.data()), static_cast<std::streamsize>(t.nbytes()));
  return f ? Status::OK() : not_found("writing '{}' failed", path);
}

Status write_pb(const std::string& path, const Tensor& t, const std::string& name) {
  onnx::TensorProto p;
  onnx_io::tensor_to_proto(t, name, &p);
  std::ofstream f(path, std::ios::binary);
  if (!f || !p.SerializeToOstream(&f)) return not_found("cannot write '{}'", path);
  return Status::OK();
}

}  // namespace kiln
