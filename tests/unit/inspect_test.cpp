// kiln::inspect_model: shape substitution, op histogram, parameters, cost totals and errors.
#include <gtest/gtest.h>
#include <kiln/inspect.h>

#include "test_models.h"

namespace kiln {
namespace {

// x[N,4] @ W[4,3] -> Relu -> Relu: 12 parameters, MatMul cost N*4*3 MACs.
const char* kModel = R"(
  <ir_version: 8, opset_import: ["" : 13]>
  g (float[N,4] x) => (float[N,3] y)
  <float[4,3] W = {1,2,3,4,5,6,7,8,9,10,11,12}> {
    h = MatMul(x, W)
    r = Relu(h)
    y = Relu(r)
  })";

const OpCostSummary* find_op(const ModelSummary& s, const std::string& op) {
  for (const auto& o : s.ops) {
    if (o.op_type == op) return &o;
  }
  return nullptr;
}

TEST(Inspect, DynamicDimsDefaultToOne) {
  ModelSummary s;
  Status st = inspect_model(testing::write_text_model(kModel, "inspect_mlp"), {}, &s);
  ASSERT_TRUE(st.ok()) << st.to_string();
  ASSERT_EQ(s.inputs.size(), 1u);
  EXPECT_EQ(s.inputs[0].shape, (std::vector<int64_t>{-1, 4}));
  EXPECT_EQ(s.inputs[0].dim_names[0], "N");
  EXPECT_EQ(s.input_shapes[0], (std::vector<int64_t>{1, 4}));
  ASSERT_EQ(s.inferred_outputs.size(), 1u);
  EXPECT_EQ(s.inferred_outputs[0].shape, (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(s.outputs[0].dim_names[0], "N");  // declared output keeps its symbol
  EXPECT_EQ(s.opsets.at(""), 13);
}

TEST(Inspect, HistogramParametersAndCost) {
  ModelSummary s;
  Status st = inspect_model(testing::write_text_model(kModel, "inspect_mlp"), {{"x", {8, 4}}}, &s);
  ASSERT_TRUE(st.ok()) << st.to_string();
  EXPECT_EQ(s.inferred_outputs[0].shape, (std::vector<int64_t>{8, 3}));
  EXPECT_EQ(s.node_count, 3);
  EXPECT_EQ(s.param_count, 12);
  EXPECT_EQ(s.param_bytes, 48);
  const OpCostSummary* matmul = find_op(s, "MatMul");
  const OpCostSummary* relu = find_op(s, "Relu");
  ASSERT_TRUE(matmul && relu);
  EXPECT_EQ(matmul->count, 1);
  EXPECT_EQ(relu->count, 2);
  EXPECT_DOUBLE_EQ(matmul->macs, 8 * 4 * 3);
  EXPECT_DOUBLE_EQ(relu->flops, 2 * 8 * 3);  // one per output element, two nodes
  EXPECT_GT(relu->bytes, 0);
  EXPECT_EQ(s.total.count, 3);
  EXPECT_DOUBLE_EQ(s.total.macs, matmul->macs + relu->macs);
  EXPECT_DOUBLE_EQ(s.total.flops, matmul->flops + relu->flops);
  EXPECT_DOUBLE_EQ(s.total.bytes, matmul->bytes + relu->bytes);
  EXPECT_DOUBLE_EQ(s.total.total_flops(), 2 * s.total.macs + s.total.flops);
  EXPECT_EQ(s.total.unknown_cost, 0);
  EXPECT_EQ(s.ops.front().op_type, "MatMul");  // sorted by FLOPs
  EXPECT_NE(s.graph_text.find("MatMul"), std::string::npos);
}

TEST(Inspect, ShapeOptionErrors) {
  const std::string path = testing::write_text_model(kModel, "inspect_mlp");
  ModelSummary s;
  Status st = inspect_model(path, {{"nope", {1, 4}}}, &s);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("'x'"), std::string::npos) << st.message();
  st = inspect_model(path, {{"x", {1, 4, 1}}}, &s);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("rank 3"), std::string::npos) << st.message();
  st = inspect_model(path, {{"x", {2, 5}}}, &s);  // dim 1 is fixed to 4
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("dimension 1"), std::string::npos) << st.message();
}

TEST(Inspect, InconsistentShapesNameTheNode) {
  ModelSummary s;
  const std::string path = testing::write_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[N,4] x, float[K,3] w) => (float[N,3] y) {
      y = MatMul(x, w)
    })", "inspect_matmul_inputs");
  Status st = inspect_model(path, {{"w", {5, 3}}}, &s);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("MatMul"), std::string::npos) << st.message();
}

TEST(Inspect, MissingFile) {
  ModelSummary s;
  Status st = inspect_model("/no/such/model.onnx", {}, &s);
  EXPECT_EQ(st.code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace kiln
