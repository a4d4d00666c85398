// fuse_elementwise (src/passes/fuse_elementwise.cpp) and the kiln.FusedElementwise op:
// regions found, the body form, numbers, and the cases where nothing may fuse.
#include <gtest/gtest.h>

#include "ops/fused_elementwise.h"
#include "pass_test_util.h"
#include "passes/passes.h"

namespace kiln::passes {
namespace {

using testing::canonical;
using testing::count_ops;
using testing::graph_from_text;

// Fuses `text`, expects the numbers of the original and a second run to change nothing.
std::unique_ptr<ir::Graph> fuse(const std::string& text) {
  auto pass = make_fuse_elementwise();
  auto g = graph_from_text(text);
  const auto original = graph_from_text(text);
  EXPECT_TRUE(testing::run_pass(*pass, *g));
  testing::expect_same_outputs(*original, *g);
  EXPECT_FALSE(testing::run_pass(*pass, *g)) << "a second run must change nothing";
  return g;
}

void expect_no_fusion(const std::string& text) {
  auto pass = make_fuse_elementwise();
  auto g = graph_from_text(text);
  const std::string before = canonical(*g);
  EXPECT_FALSE(testing::run_pass(*pass, *g));
  EXPECT_EQ(canonical(*g), before);
}

const ir::Node& fused_node(const ir::Graph& g) {
  for (const auto& n : g.nodes()) {
    if (n->op_type == ops::kFusedElementwiseOp) return *n;
  }
  throw std::runtime_error("no fused node");
}

// Scalar constants stay in the body; the [3] bias becomes a node input.
TEST(FuseElementwise, ChainWithScalarInsideAndVectorAsInput) {
  auto g = fuse(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2,3] x) => (float[2,3] y) <float two = {2.0}, float[3] b = {0.5, -1.0, 0.25}> {
  m = Mul(x, two)
  a = Add(m, b)
  r = Relu(a)
  y = Sigmoid(r)
})");
  EXPECT_EQ(canonical(*g),
            "n0 = kiln.FusedElementwise(%x, const float32[3]{0.5,-1,0.25}) body={"
            "n0 = Mul(%x, const float32[]{2})\n"
            "n1 = Add(n0, %b)\n"
            "n2 = Relu(n1)\n"
            "n3 = Sigmoid(n2)\n"
            "return n3\n}\n"
            "return n0\n");
  EXPECT_EQ(g->outputs[0]->name, "y");
  EXPECT_TRUE(ops::validate_fused_elementwise(fused_node(*g)).ok());
}

// A region is a DAG, not only a chain: x*sigmoid(x) reads x twice; a value read twice inside.
TEST(FuseElementwise, RegionWithSharedValues) {
  auto g = fuse(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2,3] x, float[3] w) => (float[2,3] y) {
  s = Sigmoid(x)
  t = Mul(x, s)
  u = Add(t, w)
  v = Mul(u, u)
  y = Tanh(v)
})");
  ASSERT_EQ(g->nodes().size(), 1u);
  const ir::Node& n = fused_node(*g);
  EXPECT_EQ(n.inputs.size(), 2u);
  EXPECT_EQ(n.attr_g("body")->nodes().size(), 5u);
}

// Where, a comparison (bool inside the body) and Clip with constant bounds.
TEST(FuseElementwise, WhereComparisonAndClip) {
  auto g = fuse(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[4,3] x, float[4,1] z) => (float[4,3] y) <float zero = {0.0}, float k = {0.1}, float lo = {-1.0}, float hi = {1.5}> {
  c = Greater(x, zero)
  l = Mul(x, k)
  w = Where(c, x, l)
  a = Add(w, z)
  y = Clip(a, lo, hi)
})");
  ASSERT_EQ(g->nodes().size(), 1u);
  EXPECT_EQ(fused_node(*g).attr_g("body")->nodes().size(), 5u);
}

// Cast between float types and back is elementwise too.
TEST(FuseElementwise, CastBetweenFloatTypes) {
  auto g = fuse(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[5] x) => (float[5] y) {
  h = Cast<to = 10>(x)
  r = Relu(h)
  y = Cast<to = 1>(r)
})");
  EXPECT_EQ(count_ops(*g, ops::kFusedElementwiseOp), 1);
}

// Regions stop at ops that are not elementwise; two regions around a MatMul.
TEST(FuseElementwise, TwoRegionsAroundAMatMul) {
  auto g = fuse(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2,3] x, float[3,3] w) => (float[2,3] y) {
  a = Relu(x)
  b = Neg(a)
  m = MatMul(b, w)
  c = Exp(m)
  y = Abs(c)
})");
  EXPECT_EQ(count_ops(*g, ops::kFusedElementwiseOp), 2);
  EXPECT_EQ(count_ops(*g, "MatMul"), 1);
}

// The interior value a is read by the Transpose: a region Relu+Sigmoid would have to keep it.
TEST(FuseElementwise, NotWhenInteriorValueIsReadOutside) {
  expect_no_fusion(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2,3] x) => (float[2,3] y, float[3,2] t) {
  a = Relu(x)
  y = Sigmoid(a)
  t = Transpose(a)
})");
  // ... or is a graph output.
  expect_no_fusion(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2,3] x) => (float[2,3] y, float[2,3] a) {
  a = Relu(x)
  y = Sigmoid(a)
})");
}

// A one-element constant of higher rank grows a: [4] + [1,1,1] is [1,1,4], more than the
// broadcast of the region's inputs ([4]), so one kernel over the inputs' broadcast cannot
// compute it.
TEST(FuseElementwise, NotWhenBroadcastGrowsAnInteriorValue) {
  expect_no_fusion(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[4] x) => (float[1,1,4] y) <float[1,1,1] c = {1.0}> {
  a = Add(x, c)
  y = Relu(a)
})");
}

TEST(FuseElementwise, NotForIntegerShapeArithmeticOrSingleOps) {
  expect_no_fusion(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (int64[3] x) => (int64[3] y) <int64 one = {1}> {
  a = Add(x, one)
  y = Mul(a, a)
})");
  expect_no_fusion(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2,3] x, float[3,3] w) => (float[2,3] y) {
  a = Relu(x)
  m = MatMul(a, w)
  y = Exp(m)
})");
}

TEST(FusedElementwiseOp, RejectsBadBodies) {
  auto g = fuse(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2,3] x) => (float[2,3] y) {
  a = Relu(x)
  y = Exp(a)
})");
  ir::Node& n = const_cast<ir::Node&>(fused_node(*g));
  ir::Graph& body = *n.attrs["body"].g;
  const_cast<ir::Node&>(*body.nodes()[0]).op_type = "Transpose";
  Status st = ops::validate_fused_elementwise(n);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find(n.name), std::string::npos) << st.message();
  n.attrs.erase("body");
  EXPECT_FALSE(ops::validate_fused_elementwise(n).ok());
}

}  // namespace
}  // namespace kiln::passes
