// Plan files: the container (src/runtime/plan_file.cpp) with every way a file can be cut short
// or corrupt, --profile parsing (src/builder/input_profile.cpp), and build_plan / describe_plan /
// Session::load of a CPU plan (src/builder/build_plan.cpp, src/api/plan_load.cpp).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "kiln/build.h"
#include "runtime/plan_file.h"
#include "test_models.h"

namespace kiln {
namespace {

using runtime::PlanFile;

PlanFile sample_plan() {
  PlanFile p;
  p.header = {{"format_version", 1}, {"kiln_version", "0.1.0"}, {"backend", "cpu"}, {"precision", "fp32"},
              {"profiles", nlohmann::json::array()}};
  p.graph_bytes = "not really onnx, but bytes";
  return p;
}

std::string expect_parse_error(const std::string& bytes) {
  PlanFile p;
  Status st = runtime::parse_plan(bytes, &p);
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(st.message().find('\n'), std::string::npos) << "one line: " << st.message();
  return st.message();
}

TEST(PlanFile, SerializeParseRoundTrip) {
  const PlanFile p = sample_plan();
  PlanFile q;
  ASSERT_TRUE(runtime::parse_plan(runtime::serialize_plan(p), &q).ok());
  EXPECT_EQ(p.header, q.header);
  EXPECT_EQ(p.graph_bytes, q.graph_bytes);
}

TEST(PlanFile, TruncatedAnywhereIsAnErrorNotACrash) {
  const std::string bytes = runtime::serialize_plan(sample_plan());
  for (size_t n = 0; n < bytes.size(); ++n) {
    const std::string msg = expect_parse_error(bytes.substr(0, n));
    EXPECT_TRUE(msg.find("truncated") != std::string::npos || msg.find("not a kiln plan") != std::string::npos ||
                msg.find("header") != std::string::npos || msg.find("graph") != std::string::npos)
        << "cut at " << n << ": " << msg;
  }
}

TEST(PlanFile, WrongMagicVersionJsonAndLengths) {
  const std::string good = runtime::serialize_plan(sample_plan());
  std::string bad = good;
  bad[0] = 'X';
  EXPECT_NE(expect_parse_error(bad).find("KILNPLAN"), std::string::npos);
  bad = good;
  bad[8] = 9;  // format version 9
  EXPECT_NE(expect_parse_error(bad).find("format version 9"), std::string::npos);
  bad = good;
  bad[12 + 8] = '#';  // first byte of the JSON header
  EXPECT_NE(expect_parse_error(bad).find("not valid JSON"), std::string::npos);
  bad = good;
  bad[12 + 7] = static_cast<char>(0x7f);  // header length near 2^63
  EXPECT_NE(expect_parse_error(bad).find("truncated"), std::string::npos);
  EXPECT_NE(expect_parse_error(good + "extra").find("unexpected bytes"), std::string::npos);
}

TEST(PlanFile, HeaderMustHaveTheKeysReadersUse) {
  PlanFile p = sample_plan();
  p.header.erase("backend");
  EXPECT_NE(expect_parse_error(runtime::serialize_plan(p)).find("'backend'"), std::string::npos);
  p = sample_plan();
  p.header["backend"] = "cuda";  // no environment, tactics, shape sets
  EXPECT_NE(expect_parse_error(runtime::serialize_plan(p)).find("environment"), std::string::npos);
  p = sample_plan();
  p.header = nlohmann::json::array();
  EXPECT_NE(expect_parse_error(runtime::serialize_plan(p)).find("not a JSON object"), std::string::npos);
}

TEST(PlanFile, ReadErrorsNameTheFile) {
  const auto path = (std::filesystem::temp_directory_path() / "kiln_unit_tests_truncated.plan").string();
  const std::string bytes = runtime::serialize_plan(sample_plan());
  std::ofstream(path, std::ios::binary) << bytes.substr(0, bytes.size() - 3);
  EXPECT_TRUE(runtime::is_plan_file(path));
  PlanFile p;
  Status st = runtime::read_plan_file(path, &p);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message().rfind(path + ": truncated plan file", 0), 0u) << st.message();
  EXPECT_FALSE(runtime::is_plan_file(path + ".missing"));
}

// --profile parsing

TensorInfo input_info(std::vector<int64_t> shape) {
  TensorInfo t;
  t.name = "x";
  t.dtype = DType::kFloat32;
  t.shape = std::move(shape);
  t.has_shape = true;
  return t;
}

TEST(InputProfile, FullShapes) {
  const TensorInfo x = input_info({-1, 3, -1, -1});
  InputProfile p;
  ASSERT_TRUE(parse_input_profile("x:1x3x32x32,4x3x64x64,8x3x128x128", &x, &p).ok());
  EXPECT_EQ(p.input, "x");
  EXPECT_EQ(p.min, (std::vector<int64_t>{1, 3, 32, 32}));
  EXPECT_EQ(p.opt, (std::vector<int64_t>{4, 3, 64, 64}));
  EXPECT_EQ(p.max, (std::vector<int64_t>{8, 3, 128, 128}));
}

TEST(InputProfile, ShorthandFillsTheOneDynamicDim) {
  const TensorInfo x = input_info({-1, 3, 224, 224});
  InputProfile p;
  ASSERT_TRUE(parse_input_profile("x:1,8,32", &x, &p).ok());
  EXPECT_EQ(p.min, (std::vector<int64_t>{1, 3, 224, 224}));
  EXPECT_EQ(p.opt, (std::vector<int64_t>{8, 3, 224, 224}));
  EXPECT_EQ(p.max, (std::vector<int64_t>{32, 3, 224, 224}));
  ASSERT_TRUE(parse_input_profile("x:1,8,32", nullptr, &p).ok());  // no input: one-dim shapes
  EXPECT_EQ(p.max, (std::vector<int64_t>{32}));
}

TEST(InputProfile, Errors) {
  const TensorInfo one = input_info({-1, 3, 224, 224});
  const TensorInfo two = input_info({-1, 3, -1, 224});
  auto error = [](const std::string& text, const TensorInfo* in) {
    InputProfile p;
    Status st = parse_input_profile(text, in, &p);
    EXPECT_FALSE(st.ok()) << text;
    EXPECT_EQ(st.message().rfind("--profile '" + text + "': ", 0), 0u) << st.message();
    return st.message();
  };
  EXPECT_NE(error("x", &one).find("NAME:MIN,OPT,MAX"), std::string::npos);
  EXPECT_NE(error("x:1,2", &one).find("three shapes"), std::string::npos);
  EXPECT_NE(error("x:1,a,3", &one).find("not a shape"), std::string::npos);
  EXPECT_NE(error("x:0,1,2", &one).find("not a shape"), std::string::npos);
  EXPECT_NE(error("x:1,2,3", &two).find("2 dynamic dimensions"), std::string::npos);
  EXPECT_NE(error("x:8,4,16", &one).find("MIN <= OPT <= MAX"), std::string::npos);
  EXPECT_NE(error("x:1x3x224,1x3x224,1x3x224", &one).find("rank"), std::string::npos);
  EXPECT_NE(error("x:1x4x224x224,1x3x224x224,1x3x224x224", &one).find("fixed at 3"), std::string::npos);
  EXPECT_NE(error("y:1,2,3", &one).find("names 'y'"), std::string::npos);
}

// build_plan with the CPU backend, then plan-info and a session from the plan.

const char* kDynamicModel = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[N,4] x) => (float[N,4] y) <float[4] b = {1, 2, 3, 4}> {
  a = Add(x, b)
  y = Relu(a)
})";

TEST(BuildPlan, CpuPlanLoadsAndRunsLikeTheModel) {
  const std::string model = testing::write_text_model(kDynamicModel, "plan_dynamic");
  const std::string plan = model + ".plan";
  BuildOptions options;
  options.session.backend = "cpu";
  options.profile_specs = {"x:1,2,8"};
  BuildReport report;
  Status st = build_plan(model, plan, options, &report);
  ASSERT_TRUE(st.ok()) << st.to_string();
  EXPECT_EQ(report.shape_sets, 3);
  EXPECT_GT(report.plan_bytes, 0u);
  EXPECT_EQ(report.plan_bytes, std::filesystem::file_size(plan));

  std::string text;
  ASSERT_TRUE(describe_plan(plan, &text).ok());
  EXPECT_NE(text.find("backend: cpu"), std::string::npos) << text;
  EXPECT_NE(text.find("profile: x min [1,4] opt [2,4] max [8,4]"), std::string::npos) << text;
  EXPECT_NE(text.find("shape set 3: x [8,4]"), std::string::npos) << text;
  EXPECT_NE(text.find("memory: weights 0.0 MiB, arena 0.0 MiB"), std::string::npos) << text;
  EXPECT_NE(text.find("kiln.FusedElementwise  cpu"), std::string::npos) << text;

  std::unique_ptr<Session> from_plan, from_model;
  ASSERT_TRUE(Session::load(plan, {.backend = "cpu"}, &from_plan).ok());
  ASSERT_TRUE(Session::load(model, {.backend = "cpu"}, &from_model).ok());
  EXPECT_EQ(from_plan->inputs()[0].dim_names, from_model->inputs()[0].dim_names);
  Tensor x(DType::kFloat32, {3, 4});
  for (int i = 0; i < 12; ++i) x.data_as<float>()[i] = static_cast<float>(i) - 6.5f;
  std::vector<Tensor> a, b;
  ASSERT_TRUE(from_plan->run({{"x", x}}, &a).ok());
  ASSERT_TRUE(from_model->run({{"x", x}}, &b).ok());
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(std::memcmp(a[0].data(), b[0].data(), a[0].nbytes()), 0);
}

TEST(BuildPlan, Errors) {
  const std::string model = testing::write_text_model(kDynamicModel, "plan_dynamic_errors");
  BuildReport report;
  BuildOptions options;
  options.session.backend = "cpu";
  options.profile_specs = {"z:1,2,8"};
  Status st = build_plan(model, model + ".plan", options, &report);
  EXPECT_NE(st.message().find("no input 'z'"), std::string::npos) << st.message();
  options.profile_specs = {"x:1,2,8", "x:1,2,4"};
  st = build_plan(model, model + ".plan", options, &report);
  EXPECT_NE(st.message().find("two profiles"), std::string::npos) << st.message();
#ifndef KILN_HAVE_CUDA
  options.session.backend = "cuda";
  options.profile_specs.clear();
  st = build_plan(model, model + ".plan", options, &report);
  EXPECT_NE(st.message().find("without the CUDA backend"), std::string::npos) << st.message();
#endif
}

TEST(BuildPlan, CudaPlanOnACpuOnlyKilnOrCpuBackendIsAnError) {
  const std::string model = testing::write_text_model(kDynamicModel, "plan_cuda_header");
  PlanFile p;
  p.header = {{"kiln_version", "0.1.0"}, {"backend", "cuda"}, {"precision", "fp16"},
              {"profiles", nlohmann::json::array()}, {"environment", {{"sm", 90}}},
              {"tactics", nlohmann::json::object()}, {"shape_sets", nlohmann::json::array()}};
  p.graph_bytes = "x";
  const std::string plan = model + ".cuda.plan";
  ASSERT_TRUE(runtime::write_plan_file(plan, p).ok());
  std::unique_ptr<Session> s;
  Status st = Session::load(plan, {.backend = "cpu"}, &s);
  EXPECT_NE(st.message().find("to run on the CPU, load the .onnx model"), std::string::npos) << st.message();
#ifndef KILN_HAVE_CUDA
  st = Session::load(plan, {}, &s);
  EXPECT_NE(st.message().find("this kiln has no CUDA backend"), std::string::npos) << st.message();
#endif
  std::string text;
  ASSERT_TRUE(describe_plan(plan, &text).ok());
  EXPECT_NE(text.find("environment: sm=90"), std::string::npos) << text;
}

}  // namespace
}  // namespace kiln
