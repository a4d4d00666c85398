// The gRPC frontend, in process: a real grpc::Channel client calls every RPC of KServe v2's
// GRPCInferenceService on a free loopback port. A scripted ModelServer makes every outcome
// (ready or not, each error code) reproducible; serve_grpc_model_test.cpp runs a real model.
#if KILN_HAVE_GRPC
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <cstring>
#include <thread>

#include "kserve/grpc_service.grpc.pb.h"
#include "serve/grpc_frontend.h"
#include "serve/metrics.h"
#include "serve/model_server.h"
#include "serve_grpc_test_util.h"

namespace kiln::serve {
namespace {

using inference::GRPCInferenceService;

// One model, "double" (y = 2 * x, FP32 [-1, 3]), answering from its own thread like the
// batcher does; `next` scripts the outcome of the next inference.
class ScriptedServer : public ModelServer {
 public:
  ~ScriptedServer() override {
    for (auto& t : threads_) t.join();
  }
  bool live() const override { return true; }
  bool ready() const override { return ready_; }
  nlohmann::json server_metadata() const override {
    return {{"name", "kiln"}, {"version", "0.1.0"}, {"extensions", {"binary_tensor_data"}}};
  }
  ServeStatus model_ready(const std::string& name, const std::string&) const override {
    if (name != "double") return {ServeStatus::Code::kNotFound, "unknown model '" + name + "'"};
    return ready_ ? ServeStatus::OK() : ServeStatus(ServeStatus::Code::kUnavailable, "not ready");
  }
  ServeStatus model_metadata(const std::string& name, const std::string& version, nlohmann::json* out) const override {
    ServeStatus st = model_ready(name, version);
    if (st.code() == ServeStatus::Code::kNotFound) return st;
    nlohmann::json x = {{"name", "x"}, {"datatype", "FP32"}, {"shape", {-1, 3}}};
    nlohmann::json y = {{"name", "y"}, {"datatype", "FP32"}, {"shape", {-1, 3}}};
    *out = {{"name", name}, {"versions", {"1"}}, {"platform", "onnx"}, {"inputs", {x}}, {"outputs", {y}}};
    return ServeStatus::OK();
  }
  void infer(InferRequest request, InferCallback done) override {
    last_deadline = request.deadline;
    last_arrival = request.arrival;
    threads_.emplace_back([this, request = std::move(request), done = std::move(done)] {
      if (!next.ok()) return done(next, {});
      if (request.model_name != "double") return done({ServeStatus::Code::kNotFound, "unknown model"}, {});
      const Tensor& x = request.inputs.at(0).data;
      Tensor y(DType::kFloat32, x.shape());
      for (int64_t i = 0; i < x.numel(); ++i) y.data_as<float>()[i] = 2 * x.data_as<float>()[i];
      InferResponse r{request.model_name, "1", request.id, {{"y", y}}, {false}};
      done(ServeStatus::OK(), std::move(r));
    });
  }
  void drain() override {}

  bool ready_ = true;
  ServeStatus next;
  std::optional<std::chrono::steady_clock::time_point> last_deadline;
  std::chrono::steady_clock::time_point last_arrival;

 private:
  std::vector<std::thread> threads_;
};

class GrpcFrontendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(GrpcFrontend::start(server_, metrics_, "127.0.0.1:0", &frontend_).ok());
    stub_ = testing::grpc_stub(frontend_->port());
  }
  void TearDown() override {
    if (frontend_) frontend_->stop();
  }
  ScriptedServer server_;
  Metrics metrics_;
  std::unique_ptr<GrpcFrontend> frontend_;
  std::unique_ptr<GRPCInferenceService::Stub> stub_;
};

TEST_F(GrpcFrontendTest, HealthAndReadiness) {
  grpc::ClientContext c1, c2, c3, c4;
  inference::ServerLiveResponse live;
  ASSERT_TRUE(stub_->ServerLive(&c1, {}, &live).ok());
  EXPECT_TRUE(live.live());
  inference::ServerReadyResponse ready;
  ASSERT_TRUE(stub_->ServerReady(&c2, {}, &ready).ok());
  EXPECT_TRUE(ready.ready());
  inference::ModelReadyRequest req;
  req.set_name("double");
  inference::ModelReadyResponse model_ready;
  ASSERT_TRUE(stub_->ModelReady(&c3, req, &model_ready).ok());
  EXPECT_TRUE(model_ready.ready());
  req.set_name("nope");
  EXPECT_EQ(stub_->ModelReady(&c4, req, &model_ready).error_code(), grpc::StatusCode::NOT_FOUND);

  // Not ready is an answer (ready = false), not an error.
  server_.ready_ = false;
  grpc::ClientContext c5, c6;
  ASSERT_TRUE(stub_->ServerReady(&c5, {}, &ready).ok());
  EXPECT_FALSE(ready.ready());
  req.set_name("double");
  ASSERT_TRUE(stub_->ModelReady(&c6, req, &model_ready).ok());
  EXPECT_FALSE(model_ready.ready());
}

TEST_F(GrpcFrontendTest, Metadata) {
  grpc::ClientContext c1, c2, c3;
  inference::ServerMetadataResponse server;
  ASSERT_TRUE(stub_->ServerMetadata(&c1, {}, &server).ok());
  EXPECT_EQ(server.name(), "kiln");
  EXPECT_EQ(server.version(), "0.1.0");
  ASSERT_EQ(server.extensions_size(), 1);
  EXPECT_EQ(server.extensions(0), "binary_tensor_data");

  inference::ModelMetadataRequest req;
  req.set_name("double");
  inference::ModelMetadataResponse model;
  ASSERT_TRUE(stub_->ModelMetadata(&c2, req, &model).ok());
  EXPECT_EQ(model.name(), "double");
  EXPECT_EQ(model.platform(), "onnx");
  ASSERT_EQ(model.versions_size(), 1);
  ASSERT_EQ(model.inputs_size(), 1);
  EXPECT_EQ(model.inputs(0).name(), "x");
  EXPECT_EQ(model.inputs(0).datatype(), "FP32");
  EXPECT_EQ(std::vector<int64_t>(model.inputs(0).shape().begin(), model.inputs(0).shape().end()),
            (std::vector<int64_t>{-1, 3}));
  ASSERT_EQ(model.outputs_size(), 1);
  EXPECT_EQ(model.outputs(0).name(), "y");
  req.set_name("nope");
  EXPECT_EQ(stub_->ModelMetadata(&c3, req, &model).error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(GrpcFrontendTest, InferRawAndTypedContents) {
  const std::vector<float> x = {1, 2, 3, -4, 5.5f, 6};
  for (bool raw : {true, false}) {
    inference::ModelInferRequest req = testing::fp32_request("double", "x", {2, 3}, x, raw);
    req.set_id(raw ? "raw-1" : "typed-1");
    inference::ModelInferResponse resp;
    grpc::ClientContext ctx;
    const grpc::Status st = stub_->ModelInfer(&ctx, req, &resp);
    ASSERT_TRUE(st.ok()) << st.error_message();
    EXPECT_EQ(resp.model_name(), "double");
    EXPECT_EQ(resp.id(), req.id());
    ASSERT_EQ(resp.outputs_size(), 1);
    EXPECT_EQ(resp.outputs(0).name(), "y");
    EXPECT_EQ(resp.outputs(0).datatype(), "FP32");
    EXPECT_EQ(std::vector<int64_t>(resp.outputs(0).shape().begin(), resp.outputs(0).shape().end()),
              (std::vector<int64_t>{2, 3}));
    const std::vector<float> y = testing::raw_floats(resp, 0);
    ASSERT_EQ(y.size(), x.size());
    for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(y[i], 2 * x[i]);
  }
}

// A request the frontend cannot decode: INVALID_ARGUMENT naming the tensor, counted as 400.
TEST_F(GrpcFrontendTest, MalformedRequestsAreInvalidArgument) {
  auto expect_invalid = [&](inference::ModelInferRequest req, const std::string& needle) {
    inference::ModelInferResponse resp;
    grpc::ClientContext ctx;
    const grpc::Status st = stub_->ModelInfer(&ctx, req, &resp);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << needle;
    EXPECT_NE(st.error_message().find(needle), std::string::npos) << st.error_message();
  };
  const std::vector<float> x = {1, 2, 3};
  inference::ModelInferRequest req = testing::fp32_request("double", "x", {1, 3}, x, true);
  req.mutable_inputs(0)->set_datatype("FP33");
  expect_invalid(req, "'x'");
  req = testing::fp32_request("double", "x", {1, 4}, x, true);  // 12 bytes for 16
  expect_invalid(req, "raw bytes");
  req = testing::fp32_request("double", "x", {1, 4}, x, false);  // 3 values for 4
  expect_invalid(req, "3 values");
  req = testing::fp32_request("double", "x", {1, -3}, x, true);
  expect_invalid(req, "negative");
  req = testing::fp32_request("double", "x", {1, 3}, x, true);
  req.add_raw_input_contents("extra");
  expect_invalid(req, "raw_input_contents");
  req = testing::fp32_request("double", "x", {1, 3}, x, false);
  req.mutable_inputs(0)->set_datatype("FP16");  // FP16 has no typed field
  expect_invalid(req, "raw_input_contents");
  req = testing::fp32_request("double", "x", {1, 1}, {}, false);
  req.mutable_inputs(0)->set_datatype("INT8");
  req.mutable_inputs(0)->mutable_contents()->add_int_contents(300);
  expect_invalid(req, "out of range");
  req = testing::fp32_request("double", "x", {1, 3}, x, true);
  (*req.mutable_parameters())["timeout"].set_string_param("soon");
  expect_invalid(req, "timeout");
  req = testing::fp32_request("made-up", "x", {1, 3}, x, true);
  req.mutable_inputs(0)->set_datatype("FP33");
  expect_invalid(req, "'x'");

  // Counted for the served model; a made-up model name adds no label to the metrics.
  const std::string text = metrics_.prometheus_text();
  EXPECT_NE(text.find("kiln_request_failures_total{model=\"double\",status=\"400\"} 8"), std::string::npos) << text;
  EXPECT_EQ(text.find("made-up"), std::string::npos) << text;
}

TEST_F(GrpcFrontendTest, ServerErrorsMapToGrpcCodes) {
  const std::pair<ServeStatus::Code, grpc::StatusCode> cases[] = {
      {ServeStatus::Code::kBadRequest, grpc::StatusCode::INVALID_ARGUMENT},
      {ServeStatus::Code::kNotFound, grpc::StatusCode::NOT_FOUND},
      {ServeStatus::Code::kUnavailable, grpc::StatusCode::UNAVAILABLE},
      {ServeStatus::Code::kDeadlineExceeded, grpc::StatusCode::DEADLINE_EXCEEDED},
      {ServeStatus::Code::kInternal, grpc::StatusCode::INTERNAL},
  };
  for (const auto& [code, grpc_code] : cases) {
    server_.next = ServeStatus(code, "scripted");
    inference::ModelInferResponse resp;
    grpc::ClientContext ctx;
    const grpc::Status st = stub_->ModelInfer(&ctx, testing::fp32_request("double", "x", {1, 3}, {1, 2, 3}, true), &resp);
    EXPECT_EQ(st.error_code(), grpc_code);
    EXPECT_EQ(st.error_message(), "scripted");
  }
}

// The request's "timeout" parameter (µs) and the call's own gRPC deadline both bound it.
TEST_F(GrpcFrontendTest, TimeoutParameterAndCallDeadlineSetTheDeadline) {
  inference::ModelInferRequest req = testing::fp32_request("double", "x", {1, 3}, {1, 2, 3}, true);
  (*req.mutable_parameters())["timeout"].set_int64_param(250000);
  inference::ModelInferResponse resp;
  grpc::ClientContext c1;
  ASSERT_TRUE(stub_->ModelInfer(&c1, req, &resp).ok());
  ASSERT_TRUE(server_.last_deadline.has_value());
  EXPECT_EQ(*server_.last_deadline - server_.last_arrival, std::chrono::microseconds(250000));

  req.mutable_parameters()->clear();
  grpc::ClientContext c2;
  c2.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  ASSERT_TRUE(stub_->ModelInfer(&c2, req, &resp).ok());
  ASSERT_TRUE(server_.last_deadline.has_value());
  const auto left = *server_.last_deadline - server_.last_arrival;
  EXPECT_GT(left, std::chrono::seconds(25));
  EXPECT_LE(left, std::chrono::seconds(31));  // gRPC rounds deadlines up a little
}

TEST(GrpcFrontend, AnAddressInUseIsAnError) {
  ScriptedServer server;
  Metrics metrics;
  std::unique_ptr<GrpcFrontend> first, second;
  ASSERT_TRUE(GrpcFrontend::start(server, metrics, "127.0.0.1:0", &first).ok());
  const Status st = GrpcFrontend::start(server, metrics, "127.0.0.1:" + std::to_string(first->port()), &second);
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(second, nullptr);
  EXPECT_FALSE(GrpcFrontend::start(server, metrics, "not an address", &second).ok());
  first->stop();
  first->stop();  // idempotent
}

}  // namespace
}  // namespace kiln::serve
#endif  // KILN_HAVE_GRPC
