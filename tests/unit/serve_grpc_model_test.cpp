// The gRPC frontend over the real ModelServer (dynamic batcher, CPU backend) with a small text
// model: every RPC end to end, outputs checked against the model's arithmetic, validation
// errors as INVALID_ARGUMENT naming the tensor, concurrent clients batched, drain -> UNAVAILABLE.
#if KILN_HAVE_GRPC
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "serve/grpc_frontend.h"
#include "serve/metrics.h"
#include "serve/model_server.h"
#include "serve_grpc_test_util.h"
#include "test_models.h"

namespace kiln::serve {
namespace {

// y = x + x with a dynamic batch dimension, so that concurrent requests can be merged.
const char* kTwiceModel = R"(
<ir_version: 8, opset_import: ["" : 17]>
twice (float[N, 3] x) => (float[N, 3] y) {
  y = Add(x, x)
}
)";

class GrpcModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ServerOptions options;
    options.models = {{"twice", kiln::testing::write_text_model(kTwiceModel, "serve_grpc_twice")}};
    options.session.backend = "cpu";
    options.batching.max_batch = 8;
    options.batching.max_queue_delay_us = 20000;  // long enough that concurrent calls meet
    metrics_ = std::make_shared<Metrics>();
    const Status st = ModelServer::create(options, metrics_, &server_);
    ASSERT_TRUE(st.ok()) << st.to_string();
    ASSERT_TRUE(GrpcFrontend::start(*server_, *metrics_, "127.0.0.1:0", &frontend_).ok());
    stub_ = testing::grpc_stub(frontend_->port());
  }
  void TearDown() override {
    if (server_) server_->drain();
    if (frontend_) frontend_->stop();
  }
  grpc::Status infer(const inference::ModelInferRequest& req, inference::ModelInferResponse* resp) {
    grpc::ClientContext ctx;
    return stub_->ModelInfer(&ctx, req, resp);
  }

  std::shared_ptr<Metrics> metrics_;
  std::unique_ptr<ModelServer> server_;
  std::unique_ptr<GrpcFrontend> frontend_;
  std::unique_ptr<inference::GRPCInferenceService::Stub> stub_;
};

TEST_F(GrpcModelTest, HealthMetadataAndInference) {
  grpc::ClientContext c1, c2, c3, c4;
  inference::ServerLiveResponse live;
  ASSERT_TRUE(stub_->ServerLive(&c1, {}, &live).ok());
  EXPECT_TRUE(live.live());
  inference::ServerReadyResponse ready;
  ASSERT_TRUE(stub_->ServerReady(&c2, {}, &ready).ok());
  EXPECT_TRUE(ready.ready());
  inference::ModelReadyRequest ready_req;
  ready_req.set_name("twice");
  inference::ModelReadyResponse model_ready;
  ASSERT_TRUE(stub_->ModelReady(&c3, ready_req, &model_ready).ok());
  EXPECT_TRUE(model_ready.ready());

  inference::ModelMetadataRequest meta_req;
  meta_req.set_name("twice");
  inference::ModelMetadataResponse meta;
  ASSERT_TRUE(stub_->ModelMetadata(&c4, meta_req, &meta).ok());
  ASSERT_EQ(meta.inputs_size(), 1);
  EXPECT_EQ(meta.inputs(0).name(), "x");
  EXPECT_EQ(meta.inputs(0).datatype(), "FP32");
  EXPECT_EQ(std::vector<int64_t>(meta.inputs(0).shape().begin(), meta.inputs(0).shape().end()),
            (std::vector<int64_t>{-1, 3}));
  ASSERT_EQ(meta.outputs_size(), 1);
  EXPECT_EQ(meta.outputs(0).name(), "y");

  const std::vector<float> x = {0.5f, -1, 2, 3, 4, 1e6f};
  for (bool raw : {true, false}) {
    inference::ModelInferRequest req = testing::fp32_request("twice", "x", {2, 3}, x, raw);
    req.set_id("r");
    inference::ModelInferResponse resp;
    const grpc::Status st = infer(req, &resp);
    ASSERT_TRUE(st.ok()) << st.error_message();
    EXPECT_EQ(resp.id(), "r");
    ASSERT_EQ(resp.outputs_size(), 1);
    EXPECT_EQ(resp.outputs(0).name(), "y");
    const std::vector<float> y = testing::raw_floats(resp, 0);
    ASSERT_EQ(y.size(), x.size());
    for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(y[i], x[i] + x[i]);
  }
}

TEST_F(GrpcModelTest, ErrorsMapToGrpcCodes) {
  inference::ModelInferResponse resp;
  grpc::Status st = infer(testing::fp32_request("nope", "x", {1, 3}, {1, 2, 3}, true), &resp);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::NOT_FOUND);
  st = infer(testing::fp32_request("twice", "x", {1, 4}, {1, 2, 3, 4}, true), &resp);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(st.error_message().find("x"), std::string::npos) << st.error_message();
  inference::ModelInferRequest req = testing::fp32_request("twice", "x", {1, 3}, {1, 2, 3}, false);
  req.mutable_inputs(0)->set_datatype("INT32");
  req.mutable_inputs(0)->clear_contents();
  for (int v : {1, 2, 3}) req.mutable_inputs(0)->mutable_contents()->add_int_contents(v);
  st = infer(req, &resp);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(st.error_message().find("x"), std::string::npos) << st.error_message();
  grpc::ClientContext ctx;
  inference::ModelMetadataRequest meta_req;
  meta_req.set_name("nope");
  inference::ModelMetadataResponse meta;
  EXPECT_EQ(stub_->ModelMetadata(&ctx, meta_req, &meta).error_code(), grpc::StatusCode::NOT_FOUND);

  // A request whose "timeout" (µs) passes while it waits for company is answered, expired.
  req = testing::fp32_request("twice", "x", {1, 3}, {1, 2, 3}, true);
  (*req.mutable_parameters())["timeout"].set_int64_param(1);
  st = infer(req, &resp);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << st.error_message();

  // After drain: not ready, and inference is refused as UNAVAILABLE.
  server_->drain();
  grpc::ClientContext c2;
  inference::ServerReadyResponse ready;
  ASSERT_TRUE(stub_->ServerReady(&c2, {}, &ready).ok());
  EXPECT_FALSE(ready.ready());
  st = infer(testing::fp32_request("twice", "x", {1, 3}, {1, 2, 3}, true), &resp);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::UNAVAILABLE);
}

// Many clients at once: every call answered once with its own numbers, and the batcher
// merged some of them (fewer batches than requests in the batch-size histogram).
TEST_F(GrpcModelTest, ConcurrentClientsAreBatched) {
  constexpr int kClients = 24;
  std::atomic<int> correct{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      const std::vector<float> x = {float(c), float(c) + 0.25f, -float(c)};
      inference::ModelInferResponse resp;
      if (!infer(testing::fp32_request("twice", "x", {1, 3}, x, true), &resp).ok()) return;
      const std::vector<float> y = testing::raw_floats(resp, 0);
      if (y.size() == 3 && y[0] == 2 * x[0] && y[1] == 2 * x[1] && y[2] == 2 * x[2]) ++correct;
    });
  }
  for (auto& t : clients) t.join();
  EXPECT_EQ(correct.load(), kClients);
  const std::string text = metrics_->prometheus_text();
  EXPECT_NE(text.find("kiln_requests_total{model=\"twice\",status=\"200\"} " + std::to_string(kClients)),
            std::string::npos) << text;
  EXPECT_NE(text.find("kiln_batch_size_sum{model=\"twice\"} " + std::to_string(kClients)), std::string::npos);
  EXPECT_EQ(text.find("kiln_batch_size_count{model=\"twice\"} " + std::to_string(kClients) + "\n"),
            std::string::npos) << "no two requests were merged";
}

}  // namespace
}  // namespace kiln::serve
#endif  // KILN_HAVE_GRPC
