#include "serve/kserve_json.h"

#include <fmt/format.h>

#include <cstring>
#include <limits>
#include <type_traits>

#include "kiln/dtype.h"

namespace kiln::serve {
namespace {

using json = nlohmann::json;
using Code = ServeStatus::Code;

ServeStatus bad(std::string message) { return {Code::kBadRequest, std::move(message)}; }

// Nested or flat "data": the protocol allows both; either way the leaves are row-major.
void flatten(const json& j, std::vector<const json*>* leaves) {
  if (!j.is_array()) {
    leaves->push_back(&j);
    return;
  }
  for (const json& e : j) flatten(e, leaves);
}

// One JSON leaf -> T, refusing values the datatype cannot hold (a float for an integer
// tensor, a negative number for an unsigned one, an out-of-range value).
template <class T>
bool leaf_value(const json& v, T* out) {
  if constexpr (std::is_same_v<T, bool>) {
    if (v.is_boolean()) return *out = v.get<bool>(), true;
    if (v.is_number_integer() && (v.get<int64_t>() == 0 || v.get<int64_t>() == 1)) return *out = v.get<int64_t>() != 0, true;
    return false;
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!v.is_number()) return false;
    *out = static_cast<T>(v.get<double>());
    return true;
  } else {
    if (v.is_number_unsigned()) {
      const uint64_t u = v.get<uint64_t>();
      if (u > static_cast<uint64_t>(std::numeric_limits<T>::max())) return false;
      return *out = static_cast<T>(u), true;
    }
    if (!v.is_number_integer()) return false;
    const int64_t i = v.get<int64_t>();
    if (i < static_cast<int64_t>(std::numeric_limits<T>::lowest())) return false;
    if (i > 0 && static_cast<uint64_t>(i) > static_cast<uint64_t>(std::numeric_limits<T>::max())) return false;
    return *out = static_cast<T>(i), true;
  }
}

template <class T>
ServeStatus fill(const std::vector<const json*>& leaves, const std::string& name, const std::string& datatype, Tensor* t) {
  T* dst = t->data_as<T>();
  for (size_t i = 0; i < leaves.size(); ++i) {
    if (!leaf_value(*leaves[i], &dst[i])) {
      return bad(fmt::format("input '{}': data[{}] = {} is not a valid {} value", name, i, leaves[i]->dump(), datatype));
    }
  }
  return ServeStatus::OK();
}

// Calls f(T{}) with the C++ element type that holds `t` in JSON (half types travel as float).
template <class F>
auto with_json_type(DType t, F&& f) {
  switch (t) {
    case DType::kBool: return f(bool{});
    case DType::kUInt8: return f(uint8_t{});
    case DType::kUInt16: return f(uint16_t{});
    case DType::kUInt32: return f(uint32_t{});
    case DType::kUInt64: return f(uint64_t{});
    case DType::kInt8: return f(int8_t{});
    case DType::kInt16: return f(int16_t{});
    case DType::kInt32: return f(int32_t{});
    case DType::kInt64: return f(int64_t{});
    case DType::kFloat64: return f(double{});
    default: return f(float{});  // FP32, FP16, BF16
  }
}

bool is_half(DType t) { return t == DType::kFloat16 || t == DType::kBFloat16; }

ServeStatus parse_shape(const json& in, const std::string& name, std::vector<int64_t>* shape) {
  const auto it = in.find("shape");
  if (it == in.end() || !it->is_array()) return bad(fmt::format("input '{}': 'shape' must be an array of integers", name));
  int64_t numel = 1;
  for (const json& d : *it) {
    if (!d.is_number_integer() || d.get<int64_t>() < 0) {
      return bad(fmt::format("input '{}': shape {} has a dimension that is not a non-negative integer", name, it->dump()));
    }
    const int64_t v = d.get<int64_t>();
    if (v != 0 && numel > (int64_t{1} << 40) / v) return bad(fmt::format("input '{}': shape {} is too large", name, it->dump()));
    numel *= v;
    shape->push_back(v);
  }
  return ServeStatus::OK();
}

// One entry of "inputs". `binary`/`offset`: the bytes after the JSON header and how many
// earlier inputs took.
ServeStatus parse_input(const json& in, std::string_view binary, size_t* offset, InferTensor* out) {
  if (!in.is_object()) return bad("each entry of 'inputs' must be an object");
  const auto name_it = in.find("name");
  if (name_it == in.end() || !name_it->is_string()) return bad("an input has no 'name' string");
  const std::string name = name_it->get<std::string>();
  out->name = name;
  const auto dt_it = in.find("datatype");
  if (dt_it == in.end() || !dt_it->is_string()) return bad(fmt::format("input '{}': no 'datatype' string", name));
  const std::string datatype = dt_it->get<std::string>();
  const DType dtype = dtype_of_datatype(datatype);
  if (dtype == DType::kUndefined) return bad(fmt::format("input '{}': datatype '{}' is not supported", name, datatype));
  std::vector<int64_t> shape;
  if (ServeStatus st = parse_shape(in, name, &shape); !st.ok()) return st;
  if (const auto p = in.find("parameters"); p != in.end()) {
    if (!p->is_object()) return bad(fmt::format("input '{}': 'parameters' must be an object", name));
    out->parameters = *p;
  }

  Tensor t = Tensor::uninitialized(dtype, shape);
  const auto size_it = out->parameters.find("binary_data_size");
  if (size_it != out->parameters.end()) {
    if (!size_it->is_number_unsigned() || size_it->get<uint64_t>() != t.nbytes()) {
      return bad(fmt::format("input '{}': binary_data_size {} does not match {} {} ({} bytes)", name, size_it->dump(),
                             datatype, shape_to_string(shape), t.nbytes()));
    }
    if (binary.size() - *offset < t.nbytes()) {
      return bad(fmt::format("input '{}': the body holds {} binary bytes for it, {} expected", name,
                             binary.size() - *offset, t.nbytes()));
    }
    if (t.nbytes()) std::memcpy(t.data(), binary.data() + *offset, t.nbytes());
    *offset += t.nbytes();
    out->data = std::move(t);
    return ServeStatus::OK();
  }

  const auto data_it = in.find("data");
  if (data_it == in.end()) return bad(fmt::format("input '{}': no 'data' and no binary_data_size", name));
  std::vector<const json*> leaves;
  flatten(*data_it, &leaves);
  if (static_cast<int64_t>(leaves.size()) != t.numel()) {
    return bad(fmt::format("input '{}': 'data' has {} elements, shape {} needs {}", name, leaves.size(),
                           shape_to_string(shape), t.numel()));
  }
  Tensor holder = is_half(dtype) ? Tensor::uninitialized(DType::kFloat32, shape) : t;
  ServeStatus st = with_json_type(dtype, [&](auto v) { return fill<decltype(v)>(leaves, name, datatype, &holder); });
  if (!st.ok()) return st;
  out->data = is_half(dtype) ? holder.to(dtype) : holder;
  return ServeStatus::OK();
}

ServeStatus parse_outputs(const json& outputs, InferRequest* out) {
  if (!outputs.is_array()) return bad("'outputs' must be an array");
  for (const json& o : outputs) {
    if (!o.is_object() || !o.contains("name") || !o["name"].is_string()) return bad("each entry of 'outputs' needs a 'name' string");
    RequestedOutput r{o["name"].get<std::string>()};
    if (const auto p = o.find("parameters"); p != o.end() && p->is_object()) {
      r.binary_data = p->value("binary_data", false);
    }
    out->outputs.push_back(std::move(r));
  }
  return ServeStatus::OK();
}

// Request-level "parameters": binary outputs for all, and the timeout in microseconds.
ServeStatus parse_parameters(const json& p, InferRequest* out) {
  if (!p.is_object()) return bad("'parameters' must be an object");
  out->parameters = p;
  if (const auto b = p.find("binary_data_output"); b != p.end()) {
    if (!b->is_boolean()) return bad("parameter 'binary_data_output' must be true or false");
    out->binary_outputs = b->get<bool>();
  }
  if (const auto t = p.find("timeout"); t != p.end()) {
    if (!t->is_number_integer() || t->get<int64_t>() <= 0) return bad("parameter 'timeout' must be a positive number of microseconds");
    out->deadline = out->arrival + std::chrono::microseconds(t->get<int64_t>());
  }
  return ServeStatus::OK();
}

// A tensor's elements as a flat JSON array (half types as float numbers).
json tensor_data(const Tensor& t) {
  const Tensor src = is_half(t.dtype()) ? t.to(DType::kFloat32) : t;
  return with_json_type(t.dtype(), [&](auto v) {
    using T = decltype(v);
    const T* p = src.data_as<T>();
    json a = json::array();
    a.get_ref<json::array_t&>().reserve(static_cast<size_t>(src.numel()));
    for (int64_t i = 0; i < src.numel(); ++i) a.push_back(p[i]);
    return a;
  });
}

}  // namespace

ServeStatus parse_infer_request(std::string_view body, std::optional<size_t> json_length, const std::string& model,
                                const std::string& version, InferRequest* out) {
  out->model_name = model;
  out->model_version = version;
  const size_t header_len = json_length.value_or(body.size());
  if (header_len > body.size()) {
    return bad(fmt::format("Inference-Header-Content-Length {} exceeds the body's {} bytes", header_len, body.size()));
  }
  json j;
  try {
    j = json::parse(body.substr(0, header_len));
  } catch (const json::parse_error& e) {
    return bad(fmt::format("malformed JSON: {}", e.what()));
  }
  if (!j.is_object()) return bad("the request body must be a JSON object");
  if (const auto id = j.find("id"); id != j.end()) {
    if (!id->is_string()) return bad("'id' must be a string");
    out->id = id->get<std::string>();
  }
  if (const auto p = j.find("parameters"); p != j.end()) {
    if (ServeStatus st = parse_parameters(*p, out); !st.ok()) return st;
  }
  const auto inputs = j.find("inputs");
  if (inputs == j.end() || !inputs->is_array() || inputs->empty()) return bad("'inputs' must be a non-empty array");
  const std::string_view binary = body.substr(header_len);
  size_t offset = 0;
  for (const json& in : *inputs) {
    InferTensor t;
    if (ServeStatus st = parse_input(in, binary, &offset, &t); !st.ok()) return st;
    out->inputs.push_back(std::move(t));
  }
  if (offset != binary.size()) {
    return bad(fmt::format("the body has {} binary bytes that no input's binary_data_size claims", binary.size() - offset));
  }
  if (const auto o = j.find("outputs"); o != j.end()) return parse_outputs(*o, out);
  return ServeStatus::OK();
}

bool wants_binary_output(const InferRequest& request, const std::string& name) {
  if (request.binary_outputs) return true;
  for (const RequestedOutput& o : request.outputs) {
    if (o.name == name) return o.binary_data;
  }
  return false;
}

EncodedResponse encode_infer_response(const InferRequest& request, const InferResponse& response) {
  json j = {{"model_name", response.model_name}};
  if (!response.model_version.empty()) j["model_version"] = response.model_version;
  if (!response.id.empty()) j["id"] = response.id;
  if (!response.parameters.empty()) j["parameters"] = response.parameters;
  json outputs = json::array();
  std::string binary;
  bool any_binary = false;  // a zero-byte binary output still makes a binary-extension answer
  for (size_t i = 0; i < response.outputs.size(); ++i) {
    const InferTensor& out = response.outputs[i];
    json o = {{"name", out.name}, {"datatype", datatype_of(out.data.dtype())}, {"shape", out.data.shape()}};
    const bool as_binary = (i < response.binary.size() && response.binary[i]) || wants_binary_output(request, out.name);
    if (as_binary) {
      any_binary = true;
      o["parameters"] = {{"binary_data_size", out.data.nbytes()}};
      binary.append(static_cast<const char*>(out.data.data()), out.data.nbytes());
    } else {
      o["data"] = tensor_data(out.data);
    }
    outputs.push_back(std::move(o));
  }
  j["outputs"] = std::move(outputs);
  EncodedResponse r;
  r.body = j.dump();
  if (any_binary) {
    r.json_length = r.body.size();
    r.body += binary;
  }
  return r;
}

// Messages may quote bytes of a malformed body: invalid UTF-8 is replaced, never thrown on.
std::string error_body(const std::string& message) {
  return json{{"error", message}}.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace kiln::serve
