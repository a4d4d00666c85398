// The GPU planner's shape pass (runtime/shape_plan.h) is host code: these tests run it without a
// GPU over small graphs, every required conformance test and every real model, the way the GPU
// executor does (optimize for cuda at -O2, find shape-tensor inputs, infer with their values).
#include "runtime/shape_plan.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include "builder/optimize.h"
#include "core/error.h"
#include "kiln/tensor_io.h"
#include "onnx/importer.h"
#include "pass_test_util.h"
#include "runtime/shape_inference.h"

namespace kiln::runtime {
namespace {

namespace fs = std::filesystem;

// What GpuExecutor::run does before it builds: candidate values, the inputs among them that
// decide shapes, then inference with those known.
Status plan(const ir::Graph& g, const std::vector<Tensor>& inputs, ConcreteTypes* out, std::vector<bool>* needed) {
  std::vector<ir::TensorType> types;
  std::vector<const Tensor*> candidates, known;
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    types.push_back(ir::TensorType::of(inputs[i].dtype(), inputs[i].shape()));
    const bool candidate = is_shape_tensor_candidate(*g.inputs[i], inputs[i].dtype(), inputs[i].numel());
    candidates.push_back(candidate ? &inputs[i] : nullptr);
  }
  KILN_RETURN_IF_ERROR(find_value_inputs(g, types, candidates, needed));
  for (size_t i = 0; i < g.inputs.size(); ++i) known.push_back((*needed)[i] ? candidates[i] : nullptr);
  return infer_concrete_types(g, types, known, out);
}

Tensor ints(std::vector<int64_t> v) {
  Tensor t = Tensor::uninitialized(DType::kInt64, {static_cast<int64_t>(v.size())});
  std::copy(v.begin(), v.end(), t.data_as<int64_t>());
  return t;
}

TEST(ShapePlan, ReshapeShapeInputIsAShapeTensor) {
  auto g = testing::graph_from_text(R"(<ir_version: 8, opset_import: ["" : 17]>
    m (float[6] x, int64[2] s) => (float[a, b] y) { y = Reshape(x, s) })");
  ConcreteTypes ct;
  std::vector<bool> needed;
  ASSERT_TRUE(plan(*g, {Tensor::uninitialized(DType::kFloat32, {6}), ints({2, 3})}, &ct, &needed).ok());
  EXPECT_EQ(needed, (std::vector<bool>{false, true}));
  EXPECT_EQ(ct.types.at(g->outputs[0]).concrete(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(ct.nodes.size(), 1u);  // the Reshape still runs on the device
}

TEST(ShapePlan, IdsIntoGatherAreNotKeyed) {
  auto g = testing::graph_from_text(R"(<ir_version: 8, opset_import: ["" : 17]>
    m (float[10, 4] emb, int64[3] ids) => (float[3, 4] y) { y = Gather(emb, ids) })");
  ConcreteTypes ct;
  std::vector<bool> needed;
  ASSERT_TRUE(plan(*g, {Tensor::uninitialized(DType::kFloat32, {10, 4}), ints({1, 2, 3})}, &ct, &needed).ok());
  EXPECT_EQ(needed, (std::vector<bool>{false, false}));
  EXPECT_EQ(ct.nodes.size(), 1u);
  EXPECT_EQ(ct.folded.count(g->outputs[0]), 0u);
}

TEST(ShapePlan, ShapeOfAnInputFolds) {
  auto g = testing::graph_from_text(R"(<ir_version: 8, opset_import: ["" : 17]>
    m (float[N, 6] x) => (float[M, 3] y) { s = Shape(x) z = Mul(s, s) r = Constant<value = int64[2] {-1, 3}>() y = Reshape(x, r) })");
  ConcreteTypes ct;
  std::vector<bool> needed;
  ASSERT_TRUE(plan(*g, {Tensor::uninitialized(DType::kFloat32, {2, 6})}, &ct, &needed).ok());
  EXPECT_EQ(ct.types.at(g->outputs[0]).concrete(), (std::vector<int64_t>{4, 3}));
}

TEST(ShapePlan, ConstantGraphOutputHasAType) {
  auto g = testing::graph_from_text(R"(<ir_version: 8, opset_import: ["" : 17]>
    m (float[2] x) => (float[2] y, float[3] c) { y = Relu(x) c = Constant<value = float[3] {1, 2, 3}>() })");
  ConcreteTypes ct;
  std::vector<bool> needed;
  ASSERT_TRUE(plan(*g, {Tensor::uninitialized(DType::kFloat32, {2})}, &ct, &needed).ok());
  EXPECT_EQ(ct.types.at(g->outputs[1]).concrete(), (std::vector<int64_t>{3}));
  EXPECT_TRUE(g->outputs[1]->constant || ct.folded.count(g->outputs[1]));
}

// y = If(c) with then = Relu(x) and else as given; `cond` computes c from input `second`.
std::unique_ptr<ir::Graph> if_model(const std::string& second, const std::string& cond, const std::string& else_out,
                                    const std::string& else_body) {
  return testing::graph_from_text(R"(<ir_version: 8, opset_import: ["" : 17]>
    m (float[4] x, )" + second + R"() => (float[N] y) {
      )" + cond + R"(
      y = If(c) <then_branch = g1 () => (float[4] t) { t = Relu(x) },
                 else_branch = g2 () => ()" + else_out + R"( e) { )" + else_body + R"( }>
    })");
}

TEST(ShapePlan, IfWithKnownConditionRunsItsBranchInline) {
  auto g = if_model("int64[1] sr", "k = Constant<value = int64[1] {16000}>() c = Equal(sr, k)", "float[4]", "e = Neg(x)");
  ConcreteTypes ct;
  std::vector<bool> needed;
  ASSERT_TRUE(plan(*g, {Tensor::uninitialized(DType::kFloat32, {4}), ints({8000})}, &ct, &needed).ok());
  EXPECT_EQ(needed, (std::vector<bool>{false, true}));
  std::vector<std::string> ops;
  for (const ir::Node* n : ct.nodes) ops.push_back(n->op_type);
  EXPECT_EQ(ops, (std::vector<std::string>{"Identity", "Neg", "Identity"}));
  EXPECT_EQ(ct.nodes.back()->outputs[0], g->outputs[0]);
}

constexpr const char* kCondOnData = "z = Constant<value = float[1] {0}>() c = Greater(f, z)";

// Condition from tensor data: the If runs on the host, its branches' outer reads as inputs.
TEST(ShapePlan, IfOnTensorDataRunsOnTheHostWhenBranchesAgree) {
  auto g = if_model("float[1] f", kCondOnData, "float[4]", "e = Neg(x)");
  ConcreteTypes ct;
  std::vector<bool> needed;
  const std::vector<Tensor> in = {Tensor::uninitialized(DType::kFloat32, {4}), Tensor::uninitialized(DType::kFloat32, {1})};
  ASSERT_TRUE(plan(*g, in, &ct, &needed).ok());
  ASSERT_EQ(ct.nodes.size(), 2u);
  const ir::Node& n = *ct.nodes[1];
  EXPECT_EQ(n.op_type, "If");
  ASSERT_EQ(n.inputs.size(), 2u);
  EXPECT_EQ(n.inputs[1], g->inputs[0]);  // x, read by both branches
  EXPECT_EQ(ct.types.at(g->outputs[0]).concrete(), (std::vector<int64_t>{4}));

  // Branches of different shapes cannot share one plan.
  auto bad = if_model("float[1] f", kCondOnData, "float[8]", "e = Concat<axis = 0>(x, x)");
  ConcreteTypes ct2;
  const Status st = plan(*bad, in, &ct2, &needed);
  EXPECT_EQ(st.code(), StatusCode::kUnsupported);
  EXPECT_NE(st.message().find("branches give output 0"), std::string::npos) << st.to_string();
}

// ---- every required conformance test and real model ----

Status load_optimized(const std::string& path, std::unique_ptr<ir::Graph>* g) {
  KILN_RETURN_IF_ERROR(onnx_io::import_model_file(path, g));
  KILN_RETURN_IF_ERROR(infer_graph_types(**g));
  builder::OptimizeOptions opt;
  opt.backend = "cuda";  // what a GPU session plans
  return builder::optimize_graph(**g, opt);
}

// Inputs in graph order: by the name stored in the file, else by position.
Status plan_with_files(const std::string& model, const std::map<std::string, std::string>& files_by_name,
                       const std::vector<std::string>& files_in_order) {
  std::unique_ptr<ir::Graph> g;
  KILN_RETURN_IF_ERROR(load_optimized(model, &g));
  std::map<std::string, Tensor> by_name;
  std::vector<Tensor> in_order;
  for (const auto& [name, file] : files_by_name) KILN_RETURN_IF_ERROR(read_tensor_file(file, &by_name[name]));
  for (const auto& file : files_in_order) {
    std::string name;
    Tensor t;
    KILN_RETURN_IF_ERROR(read_tensor_file(file, &t, &name));
    if (name.empty()) in_order.push_back(t);
    else by_name[name] = t;
  }
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < g->inputs.size(); ++i) {
    auto it = by_name.find(g->inputs[i]->name);
    if (it != by_name.end()) inputs.push_back(it->second);
    else if (i < in_order.size()) inputs.push_back(in_order[i]);
    else return invalid_argument("no data for input '{}'", g->inputs[i]->name);
  }
  ConcreteTypes ct;
  std::vector<bool> needed;
  return plan(*g, inputs, &ct, &needed);
}

fs::path shared_dir() {
  const char* env = std::getenv("KILN_SHARED_DIR");
  return env ? fs::path(env) : fs::path("/work/shared");
}

// Cases that cannot have a static plan, with why. Keep this list short and justified.
const std::map<std::string, std::string>& expected_failures() {
  static const std::map<std::string, std::string> m = {
  };
  return m;
}

void check_against_expected(const std::map<std::string, std::string>& failures, int total) {
  for (const auto& [name, why] : failures) {
    EXPECT_TRUE(expected_failures().count(name)) << name << " does not plan: " << why;
  }
  for (const auto& [name, why] : expected_failures()) {
    if (!failures.count(name)) ADD_FAILURE() << name << " plans now: take it off the expected-failure list";
  }
  std::printf("%d planned, %zu expected failures\n", total - static_cast<int>(failures.size()), failures.size());
}

TEST(ShapePlanSuite, EveryRequiredConformanceTestPlans) {
  const fs::path suite = shared_dir() / "conformance";
  std::ifstream list(suite / "required.txt");
  if (!list) GTEST_SKIP() << "no conformance suite at " << suite;
  std::map<std::string, std::string> failures;
  int total = 0;
  for (std::string name; list >> name; ++total) {
    const fs::path dir = suite / "onnx-node" / name;
    std::vector<std::string> files;
    for (int i = 0; fs::exists(dir / "test_data_set_0" / ("input_" + std::to_string(i) + ".pb")); ++i) {
      files.push_back((dir / "test_data_set_0" / ("input_" + std::to_string(i) + ".pb")).string());
    }
    Status st = plan_with_files((dir / "model.onnx").string(), {}, files);
    if (!st.ok()) failures[name] = st.to_string();
  }
  check_against_expected(failures, total);
}

TEST(ShapePlanSuite, EveryRealModelPlans) {
  const fs::path models = fs::path(__FILE__).parent_path() / ".." / ".." / "models";
  if (!fs::exists(models / "testdata")) GTEST_SKIP() << "no models at " << models;
  std::map<std::string, std::string> failures;
  int total = 0;
  for (const auto& entry : fs::directory_iterator(models / "testdata")) {
    std::ifstream f(entry.path() / "case.json");
    if (!f) continue;
    const auto spec = nlohmann::json::parse(f);
    std::map<std::string, std::string> files;
    for (const auto& [name, file] : spec["inputs"].items()) files[name] = (entry.path() / file.get<std::string>()).string();
    Status st = plan_with_files((models / spec["model"].get<std::string>()).string(), files, {});
    ++total;
    if (!st.ok()) failures[entry.path().filename().string()] = st.to_string();
  }
  check_against_expected(failures, total);
}

}  // namespace
}  // namespace kiln::runtime
