// ModelServer on the CPU backend: loading, metadata in KServe terms, readiness, and request
// validation errors that name the tensor.
#include <gtest/gtest.h>

#include "serve_test_util.h"

namespace kiln::testing {
namespace {

using serve::ServeStatus;
using Code = ServeStatus::Code;

std::unique_ptr<serve::ModelServer> add_server() {
  std::unique_ptr<serve::ModelServer> s;
  Status st = serve::ModelServer::create(serve_options("add", kServeAddModel), nullptr, &s);
  EXPECT_TRUE(st.ok()) << st.to_string();
  return s;
}

// The answer to one request (the server answers validation errors at once).
ServeStatus infer_once(serve::ModelServer& s, serve::InferRequest r, serve::InferResponse* out = nullptr) {
  Answers answers;
  s.infer(std::move(r), answers.slot(0));
  EXPECT_TRUE(answers.wait(1));
  if (out) *out = answers.response(0);
  return answers.status(0);
}

TEST(ServeModelServer, MetadataUsesKServeDatatypesAndMinusOneForDynamicDims) {
  auto s = add_server();
  EXPECT_TRUE(s->live());
  EXPECT_TRUE(s->ready());
  EXPECT_EQ(s->server_metadata()["name"], "kiln");
  nlohmann::json m;
  ASSERT_TRUE(s->model_metadata("add", "", &m).ok());
  EXPECT_EQ(m["name"], "add");
  EXPECT_EQ(m["versions"], nlohmann::json::array({"1"}));
  EXPECT_EQ(m["platform"], "kiln_cpu");
  EXPECT_EQ(m["inputs"][0], nlohmann::json({{"name", "x"}, {"datatype", "FP32"}, {"shape", {-1, -1}}}));
  EXPECT_EQ(m["outputs"][1], nlohmann::json({{"name", "r"}, {"datatype", "FP32"}, {"shape", {-1}}}));
  EXPECT_TRUE(s->model_metadata("add", "1", &m).ok());
  EXPECT_EQ(s->model_metadata("add", "2", &m).code(), Code::kNotFound);
  EXPECT_EQ(s->model_metadata("nope", "", &m).code(), Code::kNotFound);
  EXPECT_TRUE(s->model_ready("add", "").ok());
  EXPECT_EQ(s->model_ready("nope", "").code(), Code::kNotFound);
  s->drain();
  EXPECT_EQ(s->model_ready("add", "").code(), Code::kUnavailable);
}

TEST(ServeModelServer, RequestedOutputsInOrderAndBinaryFlags) {
  auto s = add_server();
  auto r = add_request("add", 2, 1, "id-7");
  r.outputs = {{"r", true}};
  serve::InferResponse resp;
  ASSERT_TRUE(infer_once(*s, r, &resp).ok());
  EXPECT_EQ(resp.id, "id-7");
  EXPECT_EQ(resp.model_version, "1");
  ASSERT_EQ(resp.outputs.size(), 1u);
  EXPECT_EQ(resp.outputs[0].name, "r");
  EXPECT_EQ(resp.binary, std::vector<bool>{true});
  EXPECT_EQ(resp.outputs[0].data.shape(), (std::vector<int64_t>{2}));
}

TEST(ServeModelServer, InputsInAnyOrder) {
  auto s = add_server();
  auto r = add_request("add", 1, 1);
  std::swap(r.inputs[0], r.inputs[1]);
  EXPECT_TRUE(infer_once(*s, r).ok());
}

void expect_bad(serve::ModelServer& s, serve::InferRequest r, Code code, const std::string& words) {
  ServeStatus st = infer_once(s, std::move(r));
  EXPECT_EQ(st.code(), code) << st.message();
  EXPECT_NE(st.message().find(words), std::string::npos) << st.message();
}

TEST(ServeModelServer, BadRequestsNameTheTensor) {
  auto s = add_server();
  expect_bad(*s, add_request("nope", 1, 1), Code::kNotFound, "unknown model 'nope'");
  auto version = add_request("add", 1, 1);
  version.model_version = "3";
  expect_bad(*s, version, Code::kNotFound, "no version '3'");

  auto missing = add_request("add", 1, 1);
  missing.inputs.pop_back();
  expect_bad(*s, missing, Code::kBadRequest, "missing input 'y'");
  auto extra = add_request("add", 1, 1);
  extra.inputs.push_back({"z", rows_tensor({1, 3}, 0)});
  expect_bad(*s, extra, Code::kBadRequest, "unknown input 'z'");
  auto twice = add_request("add", 1, 1);
  twice.inputs.push_back(twice.inputs[0]);
  expect_bad(*s, twice, Code::kBadRequest, "input 'x' given twice");
  auto dtype = add_request("add", 1, 1);
  dtype.inputs[1].data = Tensor(DType::kFloat64, {1, 3});
  expect_bad(*s, dtype, Code::kBadRequest, "input 'y': datatype FP64, the model expects FP32");
  auto rank = add_request("add", 1, 1);
  rank.inputs[0].data = rows_tensor({3}, 0);
  expect_bad(*s, rank, Code::kBadRequest, "input 'x': shape");
  auto output = add_request("add", 1, 1);
  output.outputs = {{"q", false}};
  expect_bad(*s, output, Code::kBadRequest, "unknown output 'q'");
  // x[N,C] and y[N,C]: N must agree.
  auto mismatch = add_request("add", 1, 1);
  mismatch.inputs[1].data = rows_tensor({2, 3}, 0);
  expect_bad(*s, mismatch, Code::kBadRequest, "input 'y': dim 0 (N) is 2 but 1 in input 'x'");
  // And the server keeps serving.
  EXPECT_TRUE(infer_once(*s, add_request("add", 1, 1)).ok());
}

TEST(ServeModelServer, FixedDimsAreChecked) {
  std::unique_ptr<serve::ModelServer> s;
  ASSERT_TRUE(serve::ModelServer::create(serve_options("fixed", kServeFixedModel), nullptr, &s).ok());
  serve::InferRequest r;
  r.model_name = "fixed";
  r.inputs.push_back({"x", rows_tensor({3, 3}, 0)});
  expect_bad(*s, r, Code::kBadRequest, "input 'x': shape [3,3], the model expects [2,3]");
}

TEST(ServeModelServer, CpuWithDevicesLoadsOneReplica) {
  // --devices lists GPUs; the CPU backend ignores it (one session already uses every core).
  auto o = serve_options("add", kServeAddModel);
  o.devices = {0, 1};
  std::unique_ptr<serve::ModelServer> s;
  ASSERT_TRUE(serve::ModelServer::create(o, nullptr, &s).ok());
  EXPECT_TRUE(infer_once(*s, add_request("add", 2, 1)).ok());
}

TEST(ServeModelServer, LoadErrorsNameTheModel) {
  std::unique_ptr<serve::ModelServer> s;
  serve::ServerOptions o;
  o.models.push_back({"ghost", "/nonexistent/ghost.onnx"});
  o.session.backend = "cpu";
  Status st = serve::ModelServer::create(o, nullptr, &s);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("ghost"), std::string::npos) << st.message();
  EXPECT_FALSE(s);
  EXPECT_FALSE(serve::ModelServer::create({}, nullptr, &s).ok());
}

}  // namespace
}  // namespace kiln::testing
