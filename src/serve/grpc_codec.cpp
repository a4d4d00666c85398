#include "serve/grpc_codec.h"
#if KILN_HAVE_GRPC

#include <fmt/format.h>

#include <cstring>

namespace kiln::serve {
namespace {

ServeStatus bad(const std::string& message) { return {ServeStatus::Code::kBadRequest, message}; }

// Copies typed contents into `t`, element by element, refusing values the tensor's element
// type cannot hold (e.g. 300 in int_contents for an INT8 input).
template <class T, class Repeated>
ServeStatus fill(const std::string& name, const Repeated& src, Tensor* t) {
  if (static_cast<int64_t>(src.size()) != t->numel()) {
    return bad(fmt::format("input '{}': {} values for shape {} ({} elements)", name, src.size(),
                           shape_to_string(t->shape()), t->numel()));
  }
  T* dst = t->data_as<T>();
  for (int i = 0; i < src.size(); ++i) {
    dst[i] = static_cast<T>(src[i]);
    if constexpr (std::is_integral_v<T>) {
      if (static_cast<decltype(src[i])>(dst[i]) != src[i]) {
        return bad(fmt::format("input '{}': value {} out of range for {}", name, src[i], datatype_of(t->dtype())));
      }
    }
  }
  return ServeStatus::OK();
}

ServeStatus fill_typed(const std::string& name, const inference::InferTensorContents& c, Tensor* t) {
  switch (t->dtype()) {
    case DType::kBool: return fill<bool>(name, c.bool_contents(), t);
    case DType::kInt8: return fill<int8_t>(name, c.int_contents(), t);
    case DType::kInt16: return fill<int16_t>(name, c.int_contents(), t);
    case DType::kInt32: return fill<int32_t>(name, c.int_contents(), t);
    case DType::kInt64: return fill<int64_t>(name, c.int64_contents(), t);
    case DType::kUInt8: return fill<uint8_t>(name, c.uint_contents(), t);
    case DType::kUInt16: return fill<uint16_t>(name, c.uint_contents(), t);
    case DType::kUInt32: return fill<uint32_t>(name, c.uint_contents(), t);
    case DType::kUInt64: return fill<uint64_t>(name, c.uint64_contents(), t);
    case DType::kFloat32: return fill<float>(name, c.fp32_contents(), t);
    case DType::kFloat64: return fill<double>(name, c.fp64_contents(), t);
    default:
      return bad(fmt::format("input '{}': {} has no typed contents in the protocol; send it in raw_input_contents", name,
                             datatype_of(t->dtype())));
  }
}

nlohmann::json parameter_value(const inference::InferParameter& p) {
  switch (p.parameter_choice_case()) {
    case inference::InferParameter::kBoolParam: return p.bool_param();
    case inference::InferParameter::kInt64Param: return p.int64_param();
    case inference::InferParameter::kStringParam: return p.string_param();
    case inference::InferParameter::kDoubleParam: return p.double_param();
    case inference::InferParameter::kUint64Param: return p.uint64_param();
    default: return nullptr;
  }
}

template <class Map>
nlohmann::json parameters_json(const Map& params) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [key, value] : params) j[key] = parameter_value(value);
  return j;
}

ServeStatus decode_input(const inference::ModelInferRequest::InferInputTensor& in, const std::string* raw,
                         InferTensor* out) {
  out->name = in.name();
  const DType dtype = dtype_of_datatype(in.datatype());
  if (dtype == DType::kUndefined) {
    return bad(fmt::format("input '{}': unsupported datatype '{}'", in.name(), in.datatype()));
  }
  std::vector<int64_t> shape(in.shape().begin(), in.shape().end());
  for (int64_t d : shape) {
    if (d < 0) return bad(fmt::format("input '{}': negative dimension in shape {}", in.name(), shape_to_string(shape)));
  }
  out->parameters = parameters_json(in.parameters());
  out->data = Tensor::uninitialized(dtype, shape);
  if (raw == nullptr) return fill_typed(in.name(), in.contents(), &out->data);
  if (raw->size() != out->data.nbytes()) {
    return bad(fmt::format("input '{}': {} raw bytes for {} {} ({} bytes)", in.name(), raw->size(), in.datatype(),
                           shape_to_string(shape), out->data.nbytes()));
  }
  if (!raw->empty()) std::memcpy(out->data.data(), raw->data(), raw->size());
  return ServeStatus::OK();
}

}  // namespace

ServeStatus decode_infer_request(const inference::ModelInferRequest& in, InferRequest* out) {
  out->model_name = in.model_name();
  out->model_version = in.model_version();
  out->id = in.id();
  out->parameters = parameters_json(in.parameters());
  const bool raw = in.raw_input_contents_size() > 0;
  if (raw && in.raw_input_contents_size() != in.inputs_size()) {
    return bad(fmt::format("{} raw_input_contents for {} inputs", in.raw_input_contents_size(), in.inputs_size()));
  }
  out->inputs.resize(in.inputs_size());
  for (int i = 0; i < in.inputs_size(); ++i) {
    if (raw && in.inputs(i).has_contents()) {
      return bad(fmt::format("input '{}': both contents and raw_input_contents", in.inputs(i).name()));
    }
    ServeStatus st = decode_input(in.inputs(i), raw ? &in.raw_input_contents(i) : nullptr, &out->inputs[i]);
    if (!st.ok()) return st;
  }
  for (const auto& o : in.outputs()) out->outputs.push_back({o.name(), false});
  if (auto it = in.parameters().find("timeout"); it != in.parameters().end()) {
    const nlohmann::json t = parameter_value(it->second);
    if (!t.is_number() || t.get<double>() < 0) return bad("parameter 'timeout' must be a number of microseconds");
    out->deadline = out->arrival + std::chrono::microseconds(t.get<int64_t>());
  }
  return ServeStatus::OK();
}

void encode_infer_response(const InferResponse& in, inference::ModelInferResponse* out) {
  out->set_model_name(in.model_name);
  out->set_model_version(in.model_version);
  out->set_id(in.id);
  for (const InferTensor& t : in.outputs) {
    auto* o = out->add_outputs();
    o->set_name(t.name);
    o->set_datatype(datatype_of(t.data.dtype()));
    for (int64_t d : t.data.shape()) o->add_shape(d);
    out->add_raw_output_contents(static_cast<const char*>(t.data.data()), t.data.nbytes());
  }
}

}  // namespace kiln::serve
#endif
