// What a KServe v2 (Open Inference Protocol) inference request and response carry, independent
// of how they arrived (REST JSON, REST with binary tensors, gRPC): kiln Tensors with the
// protocol's names and datatypes around them. Frontends (http_frontend, grpc_frontend) parse
// into these; the batcher and model runners only see these.
#pragma once
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::serve {

// KServe v2 datatype names ("BOOL", "UINT8", ..., "INT64", "FP16", "FP32", "FP64", "BF16",
// "BYTES") <-> kiln dtypes. BYTES has no kiln dtype (kUndefined): rejected as an input.
std::string datatype_of(DType t);
DType dtype_of_datatype(const std::string& datatype);  // kUndefined when unknown

struct InferTensor {
  std::string name;
  Tensor data;  // dtype and shape are the tensor's
  nlohmann::json parameters = nlohmann::json::object();
};

struct RequestedOutput {
  std::string name;
  bool binary_data = false;  // answer this output in the binary extension
};

struct InferRequest {
  std::string model_name;
  std::string model_version;  // empty: the model's only version
  std::string id;             // echoed in the response
  std::vector<InferTensor> inputs;
  std::vector<RequestedOutput> outputs;  // empty: every output
  nlohmann::json parameters = nlohmann::json::object();
  bool binary_outputs = false;  // "binary_data_output": true in the request parameters
  // Absolute deadline (from the request's "timeout" parameter in microseconds, or the
  // server's default); expired requests are answered with an error, never dropped.
  std::optional<std::chrono::steady_clock::time_point> deadline;
  std::chrono::steady_clock::time_point arrival = std::chrono::steady_clock::now();
};

struct InferResponse {
  std::string model_name;
  std::string model_version;
  std::string id;
  std::vector<InferTensor> outputs;
  std::vector<bool> binary;  // per output: send in the binary extension
  nlohmann::json parameters = nlohmann::json::object();
};

// The outcome of a request as the protocol sees it. kiln's engine Status (bad input, unknown
// model, internal error) maps into it; serving adds what only a server has: overloaded or
// draining (503) and deadlines (504).
class ServeStatus {
 public:
  enum class Code { kOk, kBadRequest, kNotFound, kUnavailable, kDeadlineExceeded, kInternal };

  ServeStatus() = default;
  ServeStatus(Code code, std::string message) : code_(code), message_(std::move(message)) {}
  // kInvalidArgument/kInvalidModel/kUnsupported -> bad request, kNotFound -> not found,
  // kInternal -> internal.
  static ServeStatus from(const Status& st);
  static ServeStatus OK() { return {}; }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  int http_status() const;  // 200, 400, 404, 503, 504, 500
  int grpc_code() const;    // grpc::StatusCode values: 0, 3, 5, 14, 4, 13

 private:
  Code code_ = Code::kOk;
  std::string message_;
};

}  // namespace kiln::serve
