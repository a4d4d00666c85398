// eliminate_noops, eliminate_common_subexpressions and eliminate_dead_code.
#include <gtest/gtest.h>

#include "passes_cleanup_util.h"

namespace kiln::passes {
namespace {

using testing::expect_rewrite;
using testing::expect_unchanged;
using testing::graph_from_text;
using testing::run_pass;

TEST(EliminateNoops, IdentityAndDropoutAndCast) {
  auto pass = make_eliminate_noops();
  expect_rewrite(*pass, KILN_GRAPH("(float[2,3] x) => (float[2,3] y)", "a = Identity(x)\n b = Relu(a)\n y = Identity(b)"),
                 KILN_GRAPH("(float[2,3] x) => (float[2,3] y)", "y = Relu(x)"));
  expect_rewrite(*pass,
                 KILN_GRAPH("(float[2,3] x) => (float[2,3] y) <float r = {0.3}>", "a, m = Dropout(x, r)\n y = Relu(a)"),
                 KILN_GRAPH("(float[2,3] x) => (float[2,3] y)", "y = Relu(x)"));
  expect_rewrite(*pass,
                 KILN_GRAPH("(float[2,3] x) => (float[2,3] y) <float r = {0.5}, bool t = {0}>",
                            "a = Dropout(x, r, t)\n y = Relu(a)"),
                 KILN_GRAPH("(float[2,3] x) => (float[2,3] y)", "y = Relu(x)"));
  expect_rewrite(*pass, KILN_GRAPH("(float[2,3] x) => (float[2,3] y)", "a = Cast<to = 1>(x)\n y = Relu(a)"),
                 KILN_GRAPH("(float[2,3] x) => (float[2,3] y)", "y = Relu(x)"));
}

TEST(EliminateNoops, KeepsWhatIsNotANoop) {
  auto pass = make_eliminate_noops();
  // A graph input cannot take a graph output's name: the Identity carries it.
  expect_unchanged(*pass, KILN_GRAPH("(float[2,3] x) => (float[2,3] y)", "y = Identity(x)"));
  expect_unchanged(*pass, KILN_GRAPH("(float[2,3] x) => (float[2,3] y, float[2,3] z)", "y = Relu(x)\n z = Identity(y)"));
  expect_unchanged(*pass, KILN_GRAPH("(float[2,3] x) => (float[2,3] y, bool[2,3] m)", "a, m = Dropout(x)\n y = Relu(a)"));
  expect_unchanged(*pass, KILN_GRAPH("(float[2,3] x, bool t) => (float[2,3] y) <float r = {0.5}>",
                                     "a = Dropout(x, r, t)\n y = Relu(a)"));
  expect_unchanged(*pass, KILN_GRAPH("(float[2,3] x) => (int32[2,3] y)", "y = Cast<to = 6>(x)"));
  expect_unchanged(*pass, KILN_GRAPH("(float[2,3] x) => (float[3,2] y) <int64[2] s = {3,2}>", "y = Reshape(x, s)"));
  expect_unchanged(*pass, KILN_GRAPH("(float[?,3] x) => (float[?,3] y) <int64[2] s = {1,3}>", "a = Expand(x, s)\n y = Relu(a)"));
  expect_unchanged(*pass, KILN_GRAPH("(float[2,3] x) => (float[3,2] y)", "y = Transpose<perm = [1,0]>(x)"));
  expect_unchanged(*pass, KILN_GRAPH("(float[2,3] x) => (float[2,5] y) <int64[4] p = {0,1,0,1}>", "y = Pad(x, p)"));
  // Same shape but reversed.
  expect_unchanged(*pass, KILN_GRAPH("(float[2,3] x) => (float[2,3] y) <int64[1] s = {-1}, int64[1] e = {-10}, "
                                     "int64[1] a = {1}, int64[1] st = {-1}>",
                                     "y = Slice(x, s, e, a, st)"));
  expect_unchanged(*pass, KILN_GRAPH("(float[2,3] x, float[2,3] w) => (float[4,3] y)", "y = Concat<axis = 0>(x, w)"));
}

TEST(EliminateNoops, GraphOutputKeepsItsName) {
  auto pass = make_eliminate_noops();
  const char* text = KILN_GRAPH("(float[2,3] x) => (float[2,3] y)", "a = Relu(x)\n y = Identity(a)");
  expect_rewrite(*pass, text, KILN_GRAPH("(float[2,3] x) => (float[2,3] y)", "y = Relu(x)"));
  auto g = graph_from_text(text);
  run_pass(*pass, *g);
  EXPECT_EQ(testing::output_names(*g), "y");
  // A no-op other than Identity reading a graph input leaves an Identity carrying the name.
  expect_rewrite(*pass, KILN_GRAPH("(float[2,3] x) => (float[2,3] y) <int64[2] s = {2,3}>", "y = Reshape(x, s)"),
                 KILN_GRAPH("(float[2,3] x) => (float[2,3] y)", "y = Identity(x)"));
}

TEST(EliminateNoops, SameShapeReshapes) {
  auto pass = make_eliminate_noops();
  const char* after = KILN_GRAPH("(float[2,3] x) => (float[2,3] y)", "y = Relu(x)");
  expect_rewrite(*pass, KILN_GRAPH("(float[2,3] x) => (float[2,3] y) <int64[2] s = {2,3}>", "a = Reshape(x, s)\n y = Relu(a)"),
                 after);
  expect_rewrite(*pass, KILN_GRAPH("(float[2,3] x) => (float[2,3] y) <int64[2] s = {1,3}>", "a = Expand(x, s)\n y = Relu(a)"),
                 after);
  expect_rewrite(*pass, KILN_GRAPH("(float[2,3] x) => (float[2,3] y)", "a = Flatten<axis = 1>(x)\n y = Relu(a)"), after);
  expect_rewrite(*pass, KILN_GRAPH("(float[2,3] x) => (float[2,3] y)", "a = Squeeze(x)\n y = Relu(a)"),
                 after);
  // Symbolic dims compare by name.
  auto g = graph_from_text(KILN_GRAPH("(float[N,3] x) => (float[N,3] y) <int64[2] s = {1,3}>", "a = Expand(x, s)\n y = Relu(a)"));
  EXPECT_TRUE(run_pass(*pass, *g));
  EXPECT_EQ(testing::canonical(*g), "n0 = Relu(%x)\nreturn n0\n");
}

TEST(EliminateNoops, Transposes) {
  auto pass = make_eliminate_noops();
  const char* relu = KILN_GRAPH("(float[2,3,4] x) => (float[2,3,4] y)", "y = Relu(x)");
  expect_rewrite(*pass, KILN_GRAPH("(float[2,3,4] x) => (float[2,3,4] y)", "a = Transpose<perm = [0,1,2]>(x)\n y = Relu(a)"),
                 relu);
  expect_rewrite(*pass,
                 KILN_GRAPH("(float[2,3,4] x) => (float[2,3,4] y)",
                            "a = Transpose<perm = [1,2,0]>(x)\n b = Transpose<perm = [2,0,1]>(a)\n y = Relu(b)"),
                 relu);
  expect_rewrite(*pass, KILN_GRAPH("(float[2,3,4] x) => (float[2,3,4] y)", "a = Transpose(x)\n b = Transpose(a)\n y = Relu(b)"),
                 relu);
  // Two rotations make the opposite rotation.
  expect_rewrite(*pass,
                 KILN_GRAPH("(float[2,3,4] x) => (float[4,2,3] y)",
                            "a = Transpose<perm = [1,2,0]>(x)\n b = Transpose<perm = [1,2,0]>(a)\n y = Relu(b)"),
                 KILN_GRAPH("(float[2,3,4] x) => (float[4,2,3] y)", "a = Transpose<perm = [2,0,1]>(x)\n y = Relu(a)"));
}

TEST(EliminateNoops, PadSliceConcat) {
  auto pass = make_eliminate_noops();
  const char* relu = KILN_GRAPH("(float[2,3] x) => (float[2,3] y)", "y = Relu(x)");
  expect_rewrite(*pass, KILN_GRAPH("(float[2,3] x) => (float[2,3] y) <int64[4] p = {0,0,0,0}>", "a = Pad(x, p)\n y = Relu(a)"),
                 relu);
  expect_rewrite(*pass,
                 KILN_GRAPH("(float[2,3] x) => (float[2,3] y) <int64[1] s = {0}, int64[1] e = {100}, int64[1] ax = {1}>",
                            "a = Slice(x, s, e, ax)\n y = Relu(a)"),
                 relu);
  expect_rewrite(*pass, KILN_GRAPH("(float[2,3] x) => (float[2,3] y)", "a = Concat<axis = 0>(x)\n y = Relu(a)"), relu);
}

TEST(EliminateNoops, InsideIfBranches) {
  auto pass = make_eliminate_noops();
  const char* text = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (bool c, float[2] x) => (float[2] y) {
  y = If(c) <then_branch = t () => (float[2] ty) { a = Identity(x)
      ty = Relu(a) }, else_branch = e () => (float[2] ey) { ey = Neg(x) }>
})";
  auto g = graph_from_text(text);
  EXPECT_TRUE(run_pass(*pass, *g));
  const ir::Graph* then_branch = g->nodes()[0]->attr_g("then_branch");
  ASSERT_EQ(then_branch->nodes().size(), 1u);
  EXPECT_EQ(then_branch->nodes()[0]->op_type, "Relu");
  EXPECT_FALSE(run_pass(*pass, *g));
}

// eliminate_common_subexpressions

TEST(EliminateCommonSubexpressions, MergesRepeatedChains) {
  auto pass = make_eliminate_common_subexpressions();
  expect_rewrite(*pass,
                 KILN_GRAPH("(float[2,3] x) => (float[2,3] y)",
                            "a1 = Relu(x)\n a2 = LeakyRelu<alpha = 0.1>(a1)\n b1 = Relu(x)\n b2 = LeakyRelu<alpha = 0.1>(b1)\n"
                            "y = Add(a2, b2)"),
                 KILN_GRAPH("(float[2,3] x) => (float[2,3] y)", "a1 = Relu(x)\n a2 = LeakyRelu<alpha = 0.1>(a1)\n y = Add(a2, a2)"));
}

TEST(EliminateCommonSubexpressions, MergesEqualConstantsFirst) {
  auto pass = make_eliminate_common_subexpressions();
  expect_rewrite(*pass,
                 KILN_GRAPH("(float[2] x) => (float[2] y) <float[2] c1 = {1.0, 2.0}, float[2] c2 = {1.0, 2.0}>",
                            "a = Add(x, c1)\n b = Add(x, c2)\n y = Mul(a, b)"),
                 KILN_GRAPH("(float[2] x) => (float[2] y) <float[2] c1 = {1.0, 2.0}>", "a = Add(x, c1)\n y = Mul(a, a)"));
}

TEST(EliminateCommonSubexpressions, KeepsDifferentNodesAndOutputs) {
  auto pass = make_eliminate_common_subexpressions();
  expect_unchanged(*pass, KILN_GRAPH("(float[2] x) => (float[2] y)",
                                     "a = LeakyRelu<alpha = 0.1>(x)\n b = LeakyRelu<alpha = 0.2>(x)\n y = Add(a, b)"));
  expect_unchanged(*pass, KILN_GRAPH("(float[2] x) => (float[2] y) <float[2] c1 = {1.0, 2.0}, float[2] c2 = {1.0, 3.0}>",
                                     "a = Add(x, c1)\n b = Add(x, c2)\n y = Mul(a, b)"));
  expect_unchanged(*pass, KILN_GRAPH("(float[2] x, float[2] w) => (float[2] y)", "a = Sub(x, w)\n b = Sub(w, x)\n y = Add(a, b)"));
  // Two graph outputs cannot share one value (each keeps its name).
  expect_unchanged(*pass, KILN_GRAPH("(float[2] x) => (float[2] y, float[2] z)", "y = Relu(x)\n z = Relu(x)"));
}

TEST(EliminateCommonSubexpressions, GraphOutputNameMovesToTheKeptNode) {
  auto pass = make_eliminate_common_subexpressions();
  const char* text = KILN_GRAPH("(float[2] x) => (float[2] y, float[2] z)", "a = Relu(x)\n y = Relu(x)\n z = Sigmoid(a)");
  expect_rewrite(*pass, text, KILN_GRAPH("(float[2] x) => (float[2] y, float[2] z)", "y = Relu(x)\n z = Sigmoid(y)"));
  auto g = graph_from_text(text);
  run_pass(*pass, *g);
  EXPECT_EQ(testing::output_names(*g), "y,z");
}

// eliminate_dead_code

TEST(EliminateDeadCode, RemovesUnreadNodesAndInitializers) {
  auto pass = make_eliminate_dead_code();
  const char* text = KILN_GRAPH("(float[2] x) => (float[2] y) <float[2] w = {1.0, 2.0}>",
                                "a = Add(x, w)\n b = Sigmoid(a)\n y = Tanh(x)");
  expect_rewrite(*pass, text, KILN_GRAPH("(float[2] x) => (float[2] y)", "y = Tanh(x)"));
  auto g = graph_from_text(text);
  run_pass(*pass, *g);
  EXPECT_EQ(g->find_value("w"), nullptr);
  EXPECT_EQ(g->find_value("b"), nullptr);
  expect_unchanged(*pass, KILN_GRAPH("(float[2] x) => (float[2] y)", "a = Relu(x)\n y = Tanh(a)"));
}

TEST(EliminateDeadCode, CleansIfBranchesAndTheirCaptures) {
  auto pass = make_eliminate_dead_code();
  // The then branch's only read of `a` is dead, so `a` (outside) goes too.
  const char* text = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (bool c, float[2] x) => (float[2] y) {
  a = Relu(x)
  y = If(c) <then_branch = t () => (float[2] ty) { dead = Sigmoid(a)
      ty = Neg(x) }, else_branch = e () => (float[2] ey) { ey = Abs(x) }>
})";
  auto g = graph_from_text(text);
  auto reference = graph_from_text(text);
  EXPECT_TRUE(run_pass(*pass, *g));
  ASSERT_EQ(g->nodes().size(), 1u);
  EXPECT_EQ(g->nodes()[0]->op_type, "If");
  EXPECT_EQ(g->nodes()[0]->attr_g("then_branch")->nodes().size(), 1u);
  EXPECT_EQ(g->nodes()[0]->implicit_inputs.size(), 1u);  // x only
  EXPECT_EQ(g->find_value("a"), nullptr);
  testing::expect_same_outputs(*reference, *g);
  EXPECT_FALSE(run_pass(*pass, *g));
}

}  // namespace
}  // namespace kiln::passes
