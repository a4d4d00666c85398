// If: branch selection, outer-scope reads, and output types when branches disagree on shape.
#include <gtest/gtest.h>

#include "kiln/session.h"
#include "onnx/importer.h"
#include "runtime/shape_inference.h"
#include "test_models.h"

namespace kiln {
namespace {

// Both branches read `z`, a value computed in the outer graph; the else branch returns a
// constant of a different length, so the If output's length is only known at run time.
constexpr const char* kIfModel = R"(
  <ir_version: 8, opset_import: ["" : 13]>
  g (bool cond, float[2] x) => (float[N] y) {
    z = Identity(x)
    y = If (cond) <then_branch = then_g () => (float[2] t) { t = Identity(z) },
                   else_branch = else_g () => (float[3] e) { e = Constant <value = float[3] {7, 8, 9}> () }>
  }
)";

Tensor scalar_bool(bool v) {
  Tensor t(DType::kBool, {});
  *t.data_as<bool>() = v;
  return t;
}

Tensor floats(std::vector<float> v) {
  Tensor t(DType::kFloat32, {static_cast<int64_t>(v.size())});
  std::copy(v.begin(), v.end(), t.data_as<float>());
  return t;
}

std::vector<float> values(const Tensor& t) { return {t.data_as<float>(), t.data_as<float>() + t.numel()}; }

TEST(If, RunsTheSelectedBranchWithOuterScopeValues) {
  std::unique_ptr<Session> s;
  ASSERT_TRUE(Session::load(testing::write_text_model(kIfModel, "if_outer"), {.backend = "cpu"}, &s).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(s->run({{"cond", scalar_bool(true)}, {"x", floats({1, 2})}}, &out).ok());
  EXPECT_EQ(values(out.at(0)), (std::vector<float>{1, 2}));
  Status st = s->run({{"cond", scalar_bool(false)}, {"x", floats({1, 2})}}, &out);
  ASSERT_TRUE(st.ok()) << st.to_string();
  EXPECT_EQ(values(out.at(0)), (std::vector<float>{7, 8, 9}));
}

TEST(If, MergesBranchShapesStatically) {
  std::unique_ptr<ir::Graph> g;
  ASSERT_TRUE(onnx_io::import_model_file(testing::write_text_model(kIfModel, "if_merge"), &g).ok());
  ASSERT_TRUE(runtime::infer_graph_types(*g).ok());
  const ir::Node& node = *g->nodes().back();
  ASSERT_EQ(node.op_type, "If");
  const ir::TensorType& t = node.outputs[0]->type;
  EXPECT_EQ(t.dtype, DType::kFloat32);
  ASSERT_EQ(t.rank(), 1);
  EXPECT_FALSE((*t.shape)[0].known());  // 2 in one branch, 3 in the other
}

TEST(If, RejectsBranchesWithDifferentOutputCounts) {
  const auto path = testing::write_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (bool cond, float[2] x) => (float[2] y) {
      y = If (cond) <then_branch = then_g () => (float[2] t) { t = Identity(x) },
                     else_branch = else_g () => (float[2] e, float[2] f) { e = Identity(x) f = Identity(x) }>
    }
  )", "if_bad_count");
  std::unique_ptr<Session> s;
  Status st = Session::load(path, {.backend = "cpu"}, &s);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("else_branch"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace kiln
