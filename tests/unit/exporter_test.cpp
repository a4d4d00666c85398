// ONNX export (src/onnx/exporter.cpp): import(export(g)) must give back the same graph (canonical
// text, input/output types, node opsets, constants bit for bit) and the same outputs, for small
// graphs, subgraphs, every dtype kiln has, fused kiln-domain ops and optimized real models.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "builder/optimize.h"
#include "kiln/tensor_io.h"
#include "onnx/exporter.h"
#include "pass_test_util.h"
#include "passes/passes.h"

namespace kiln::onnx_io {
namespace {

using testing::canonical;
using testing::graph_from_text;

std::unique_ptr<ir::Graph> round_trip(const ir::Graph& g) {
  std::string bytes;
  Status st = export_model_bytes(g, &bytes);
  EXPECT_TRUE(st.ok()) << st.to_string();
  std::unique_ptr<ir::Graph> back;
  st = import_model_bytes(bytes, ".", &back);
  EXPECT_TRUE(st.ok()) << st.to_string();
  if (!back) return nullptr;
  st = runtime::infer_graph_types(*back);
  EXPECT_TRUE(st.ok()) << st.to_string();
  st = ir::verify_graph(*back);
  EXPECT_TRUE(st.ok()) << st.to_string();
  return back;
}

std::vector<std::string> signature(const std::vector<ir::Value*>& values) {
  std::vector<std::string> out;
  for (const ir::Value* v : values) out.push_back(v->name + ":" + v->type.to_string());
  return out;
}

std::vector<std::string> node_opsets(const ir::Graph& g) {
  std::vector<std::string> out;
  for (const auto& n : g.nodes()) out.push_back(n->op_type + "/" + std::to_string(n->opset));
  return out;
}

// Same structure, signature and opsets; returns the re-imported graph for further checks.
std::unique_ptr<ir::Graph> expect_round_trip(const ir::Graph& g) {
  auto back = round_trip(g);
  if (!back) return nullptr;
  EXPECT_EQ(canonical(g), canonical(*back));
  EXPECT_EQ(signature(g.inputs), signature(back->inputs));
  EXPECT_EQ(signature(g.outputs), signature(back->outputs));
  EXPECT_EQ(node_opsets(g), node_opsets(*back));
  return back;
}

TEST(Exporter, ConvGraphWithSymbolicDims) {
  auto g = graph_from_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[N,2,5,5] x) => (float[N,3,5,5] y) <float[3,2,3,3] w = {1,2,3,4,5,6,7,8,9,1,2,3,4,5,6,7,8,9,
  1,2,3,4,5,6,7,8,9,1,2,3,4,5,6,7,8,9,1,2,3,4,5,6,7,8,9,1,2,3,4,5,6,7,8,9}, float[3] b = {0.1, 0.2, 0.3}> {
  c = Conv <pads = [1,1,1,1]> (x, w, b)
  y = Relu(c)
})");
  auto back = expect_round_trip(*g);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->inputs[0]->type.to_string(), "float32[N,2,5,5]");
}

TEST(Exporter, IfWithSubgraphsReadingOuterValues) {
  auto g = graph_from_text(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (bool cond, float[2] x) => (float[2] y) {
  z = Relu(x)
  y = If (cond) <then_branch = then_g () => (float[2] t) { t = Neg(z) },
                 else_branch = else_g () => (float[2] e) <float[2] k = {7, 8}> { e = Add(x, k) }>
})");
  auto back = expect_round_trip(*g);
  ASSERT_TRUE(back);
  testing::expect_same_outputs(*g, *back, 1, 0, 0);
  testing::expect_same_outputs(*g, *back, 2, 0, 0);
}

TEST(Exporter, ConstantsOfEveryDtypeKeepTheirBytes) {
  auto g = std::make_unique<ir::Graph>();
  g->opsets[""] = 17;
  ir::Value* x = g->add_value("x", ir::TensorType(DType::kFloat32, {2}));
  g->inputs.push_back(x);
  ir::Value* y = g->add_value("y");
  g->add_node("Relu", {x}, {y}, "relu");
  g->outputs.push_back(y);
  for (DType t : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16, DType::kFloat8E4M3FN,
                  DType::kFloat8E5M2, DType::kInt8, DType::kInt16, DType::kInt32, DType::kInt64, DType::kUInt8,
                  DType::kUInt16, DType::kUInt32, DType::kUInt64, DType::kBool}) {
    Tensor c = Tensor::uninitialized(t, {3, 2});
    auto* bytes = static_cast<uint8_t*>(c.data());
    for (size_t i = 0; i < c.nbytes(); ++i) bytes[i] = static_cast<uint8_t>(t == DType::kBool ? i % 2 : 17 * i + 3);
    g->outputs.push_back(g->add_constant(std::string("c_") + dtype_name(t), std::move(c)));
  }
  ASSERT_TRUE(runtime::infer_graph_types(*g).ok());
  auto back = expect_round_trip(*g);
  ASSERT_TRUE(back);
  for (size_t i = 1; i < g->outputs.size(); ++i) {
    const Tensor& a = *g->outputs[i]->constant;
    ASSERT_TRUE(back->outputs[i]->constant) << g->outputs[i]->name;
    const Tensor& b = *back->outputs[i]->constant;
    EXPECT_EQ(a.dtype(), b.dtype());
    EXPECT_EQ(a.shape(), b.shape());
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.nbytes()), 0) << g->outputs[i]->name;
  }
}

TEST(Exporter, FusedElementwiseBodyAndKilnDomain) {
  auto g = graph_from_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2,3] x) => (float[2,3] y) <float two = {2.0}, float[3] b = {0.5, -1.0, 0.25}> {
  m = Mul(x, two)
  a = Add(m, b)
  r = Relu(a)
  y = Sigmoid(r)
})");
  ASSERT_TRUE(testing::run_pass(*passes::make_fuse_elementwise(), *g));
  ASSERT_EQ(testing::count_ops(*g, "FusedElementwise"), 1);
  auto back = expect_round_trip(*g);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->nodes()[0]->domain, "kiln");
  testing::expect_same_outputs(*g, *back, 1, 0, 0);
}

// A pass may give a node newer semantics than the model's opset (Softmax on the last axis in
// an opset-11 model): the node keeps its own opset through export.
TEST(Exporter, NodeOpsetNewerThanTheModelsSurvives) {
  auto g = graph_from_text(R"(
<ir_version: 8, opset_import: ["" : 11]>
g (float[2,3,4] x) => (float[2,3,4] y) {
  y = Softmax <axis = -1> (x)
})");
  g->nodes()[0]->opset = 13;
  auto back = expect_round_trip(*g);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->nodes()[0]->opset, 13);
  testing::expect_same_outputs(*g, *back, 1, 0, 0);
}

// Real models, optimized as a session would: the graph comes back identical and computes the
// same numbers on the model's test input, bit for bit.
class ExporterModels : public ::testing::TestWithParam<const char*> {};

// The checkout's models/ (filled by scripts/fetch_models.sh), found from this file's path.
std::filesystem::path models_dir() {
  return std::filesystem::path(__FILE__).parent_path().parent_path().parent_path() / "models";
}

TEST_P(ExporterModels, OptimizedGraphRoundTrips) {
  const std::string name = GetParam();
  const auto model = models_dir() / (name + ".onnx");
  const auto case_json = models_dir() / "testdata" / name / "case.json";
  if (!std::filesystem::exists(model) || !std::filesystem::exists(case_json)) GTEST_SKIP() << "no " << model;
  for (const char* backend : {"cpu", "cuda"}) {
    SCOPED_TRACE(backend);
    std::unique_ptr<ir::Graph> g;
    ASSERT_TRUE(import_model_file(model.string(), &g).ok());
    ASSERT_TRUE(runtime::infer_graph_types(*g).ok());
    builder::OptimizeOptions opt;
    opt.backend = backend;
    opt.prefer_channels_last = std::string(backend) == "cuda";
    opt.precision = std::string(backend) == "cuda" ? "fp16" : "fp32";  // lowered types and Casts too
    ASSERT_TRUE(builder::optimize_graph(*g, opt).ok());
    auto back = expect_round_trip(*g);
    ASSERT_TRUE(back);
    if (std::string(backend) == "cuda") continue;  // fp16 on the CPU reference kernels is slow
    std::map<std::string, Tensor> inputs;
    const auto spec = nlohmann::json::parse(std::ifstream(case_json));
    for (const auto& [input, file] : spec.at("inputs").items()) {
      ASSERT_TRUE(read_tensor_file((case_json.parent_path() / file.get<std::string>()).string(), &inputs[input]).ok());
    }
    std::vector<Tensor> want, got;
    ASSERT_TRUE(runtime::CpuExecutor(*g).run(inputs, &want).ok());
    Status st = runtime::CpuExecutor(*back).run(inputs, &got);
    ASSERT_TRUE(st.ok()) << st.to_string();
    ASSERT_EQ(want.size(), got.size());
    for (size_t i = 0; i < want.size(); ++i) {
      ASSERT_EQ(want[i].shape(), got[i].shape());
      EXPECT_EQ(std::memcmp(want[i].data(), got[i].data(), want[i].nbytes()), 0) << "output " << i;
    }
  }
}

// Every required conformance model, optimized at -O2 with channels-last layouts: the graph comes
// back with the same structure.
TEST(ExporterConformance, RequiredModelsRoundTrip) {
  const auto shared = models_dir().parent_path().parent_path() / "shared" / "conformance";
  std::ifstream list(shared / "required.txt");
  if (!list) GTEST_SKIP() << "no " << shared;
  int checked = 0;
  for (std::string name; std::getline(list, name);) {
    SCOPED_TRACE(name);
    std::unique_ptr<ir::Graph> g;
    if (!import_model_file((shared / "onnx-node" / name / "model.onnx").string(), &g).ok()) continue;
    if (!runtime::infer_graph_types(*g).ok()) continue;
    builder::OptimizeOptions opt;
    opt.prefer_channels_last = true;
    if (!builder::optimize_graph(*g, opt).ok()) continue;
    expect_round_trip(*g);
    ++checked;
  }
  EXPECT_GT(checked, 400);
}

INSTANTIATE_TEST_SUITE_P(Models, ExporterModels,
                         ::testing::Values("resnet50", "mobilenetv2", "ppocr_det", "ppocr_rec", "ppocr_cls",
                                           "blazeface", "silero_vad"));

}  // namespace
}  // namespace kiln::onnx_io
