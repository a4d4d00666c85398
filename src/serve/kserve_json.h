// The KServe v2 REST body codec: JSON tensors and the binary tensor extension.
//
// A request body is a JSON object, optionally followed by raw tensor bytes; when bytes follow,
// the HTTP header Inference-Header-Content-Length gives the JSON part's length, and each input
// that carries "parameters": {"binary_data_size": N} takes the next N bytes in input order.
// Outputs are answered in the binary extension when the request asks for it (per output
// "parameters": {"binary_data": true}, or "binary_data_output": true for all); the response
// then carries the JSON header's length the same way.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "serve/infer_types.h"

namespace kiln::serve {

// Parses an inference request for `model`/`version` (from the URL). `json_length`: the
// Inference-Header-Content-Length header when present. Errors are kBadRequest naming the
// tensor or field at fault. Sets `deadline` from the "timeout" request parameter
// (microseconds) when present.
ServeStatus parse_infer_request(std::string_view body, std::optional<size_t> json_length,
                                const std::string& model, const std::string& version, InferRequest* out);

// Whether output `name` goes in the binary extension: asked per output, or for all outputs.
bool wants_binary_output(const InferRequest& request, const std::string& name);

struct EncodedResponse {
  std::string body;
  std::optional<size_t> json_length;  // set when binary tensor bytes follow the JSON
};

// Encodes a response; `request` says which outputs go in the binary extension (together with
// InferResponse::binary).
EncodedResponse encode_infer_response(const InferRequest& request, const InferResponse& response);

// {"error": message}
std::string error_body(const std::string& message);

}  // namespace kiln::serve
