// Client-side helpers for the gRPC frontend tests: a stub on a loopback port, FP32 requests
// (raw or typed contents) and reading raw FP32 outputs back.
#pragma once
#if KILN_HAVE_GRPC
#include <grpcpp/grpcpp.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "kserve/grpc_service.grpc.pb.h"

namespace kiln::serve::testing {

inline std::unique_ptr<inference::GRPCInferenceService::Stub> grpc_stub(int port) {
  return inference::GRPCInferenceService::NewStub(
      grpc::CreateChannel("127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials()));
}

inline inference::ModelInferRequest fp32_request(const std::string& model, const std::string& input,
                                                 const std::vector<int64_t>& shape, const std::vector<float>& values,
                                                 bool raw) {
  inference::ModelInferRequest req;
  req.set_model_name(model);
  auto* in = req.add_inputs();
  in->set_name(input);
  in->set_datatype("FP32");
  for (int64_t d : shape) in->add_shape(d);
  if (raw) {
    req.add_raw_input_contents(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
  } else {
    for (float v : values) in->mutable_contents()->add_fp32_contents(v);
  }
  return req;
}

inline std::vector<float> raw_floats(const inference::ModelInferResponse& resp, int output) {
  const std::string& bytes = resp.raw_output_contents(output);
  std::vector<float> out(bytes.size() / sizeof(float));
  std::memcpy(out.data(), bytes.data(), out.size() * sizeof(float));
  return out;
}

}  // namespace kiln::serve::testing
#endif
