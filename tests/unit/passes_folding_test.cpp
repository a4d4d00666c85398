// constant_folding and fold_shape_computations.
#include <gtest/gtest.h>

#include "passes_cleanup_util.h"

namespace kiln::passes {
namespace {

using testing::canonical;
using testing::expect_rewrite;
using testing::expect_unchanged;
using testing::graph_from_text;
using testing::run_pass;

TEST(ConstantFolding, FoldsChainsInOneSweep) {
  auto pass = make_constant_folding();
  expect_rewrite(*pass,
                 KILN_GRAPH("(float[2] x) => (float[2] y) <float[2] a = {1.0, 2.0}, float[2] b = {3.0, 4.0}>",
                            "s = Add(a, b)\n t = Neg(s)\n y = Mul(x, t)"),
                 KILN_GRAPH("(float[2] x) => (float[2] y) <float[2] t = {-4.0, -6.0}>", "y = Mul(x, t)"));
  // Shape arithmetic feeding a Reshape.
  expect_rewrite(*pass,
                 KILN_GRAPH("(float[2,3] x) => (float[3,2] y) <int64[1] a = {3}, int64[1] b = {2}>",
                            "s = Concat<axis = 0>(a, b)\n y = Reshape(x, s)"),
                 KILN_GRAPH("(float[2,3] x) => (float[3,2] y) <int64[2] s = {3, 2}>", "y = Reshape(x, s)"));
}

TEST(ConstantFolding, FoldedGraphOutputKeepsItsName) {
  auto pass = make_constant_folding();
  const char* text = KILN_GRAPH("(float[2] x) => (float[2] y, float[2] z) <float[2] a = {1.0, 2.0}>",
                                "y = Neg(a)\n z = Add(x, y)");
  expect_rewrite(*pass, text,
                 KILN_GRAPH("(float[2] x) => (float[2] y, float[2] z) <float[2] c = {-1.0, -2.0}>",
                            "y = Identity(c)\n z = Add(x, c)"));
  auto g = graph_from_text(text);
  run_pass(*pass, *g);
  EXPECT_EQ(testing::output_names(*g), "y,z");
}

TEST(ConstantFolding, SizeLimitDoesNotDuplicateWeights) {
  auto pass = make_constant_folding();
  PassContext ctx = testing::cpu_pass_context();
  ctx.fold_size_limit_bytes = 16;
  // A transposed weight replaces the weight: folded whatever its size.
#define WEIGHT "<float[2,4] w = {1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0}>"
  expect_rewrite(*pass, KILN_GRAPH("(float[3,4] x) => (float[3,2] y) " WEIGHT, "wt = Transpose(w)\n y = MatMul(x, wt)"),
                 KILN_GRAPH("(float[3,4] x) => (float[3,2] y) <float[4,2] w = {1.0, 5.0, 2.0, 6.0, 3.0, 7.0, 4.0, 8.0}>",
                            "y = MatMul(x, w)"),
                 ctx);
  // The weight is read elsewhere too: folding would keep both copies.
  expect_unchanged(*pass,
                   KILN_GRAPH("(float[3,4] x) => (float[3,2] y, float[2,4] z) " WEIGHT,
                              "wt = Transpose(w)\n y = MatMul(x, wt)\n z = Neg(w)"),
                   ctx);
  // An expansion larger than the limit.
  expect_unchanged(*pass,
                   KILN_GRAPH("(float[4,4] x) => (float[4,4] y) <float[1] a = {1.0}, int64[2] s = {4, 4}>",
                              "e = Expand(a, s)\n y = Add(x, e)"),
                   ctx);
#undef WEIGHT
}

TEST(ConstantFolding, KeepsQuantizedWeightsAndNonConstants) {
  auto pass = make_constant_folding();
  expect_unchanged(*pass, KILN_GRAPH("(float[3,2] x) => (float[3,2] y) <int8[2,2] q = {1, 2, 3, 4}, float s = {0.5}>",
                                     "w = DequantizeLinear(q, s)\n y = MatMul(x, w)"));
  expect_unchanged(*pass, KILN_GRAPH("(float[2] x) => (float[2] y) <float[2] a = {1.0, 2.0}>", "y = Add(x, a)"));
  PassContext no_eval = testing::cpu_pass_context();
  no_eval.evaluate = nullptr;
  expect_unchanged(*pass, KILN_GRAPH("(float[2] x) => (float[2] y) <float[2] a = {1.0, 2.0}>", "b = Neg(a)\n y = Add(x, b)"),
                   no_eval);
}

// fold_shape_computations

TEST(FoldShapeComputations, StaticShapeAndSize) {
  auto pass = make_fold_shape_computations();
  expect_rewrite(*pass, KILN_GRAPH("(float[2,3] x, float[3,2] w) => (float[2,3] y)", "s = Shape(x)\n y = Reshape(w, s)"),
                 KILN_GRAPH("(float[2,3] x, float[3,2] w) => (float[2,3] y) <int64[2] s = {2, 3}>", "y = Reshape(w, s)"));
  expect_rewrite(*pass,
                 KILN_GRAPH("(float[2,3] x, float[1] w) => (float[3] y)", "s = Shape<start = -1>(x)\n y = Expand(w, s)"),
                 KILN_GRAPH("(float[2,3] x, float[1] w) => (float[3] y) <int64[1] s = {3}>", "y = Expand(w, s)"));
  expect_rewrite(*pass, KILN_GRAPH("(float[2,3] x) => (int64 y)", "a = Size(x)\n y = Neg(a)"),
                 KILN_GRAPH("(float[2,3] x) => (int64 y) <int64 a = {6}>", "y = Neg(a)"));
}

// Symbolic-shape graphs cannot run as they are: give their inputs concrete types first.
void concretize(ir::Graph& g, int64_t dim) {
  for (ir::Value* v : g.inputs) {
    for (ir::Dim& d : *v->type.shape) {
      if (!d.known()) d = ir::Dim(dim);
    }
  }
}

TEST(FoldShapeComputations, PicksStaticDimsOfDynamicShapes) {
  auto pass = make_fold_shape_computations();
  const char* text = KILN_GRAPH(
      "(float[N,3,4] x) => (float[N,12] y) <int64 i1 = {1}, int64[1] i2 = {-1}, int64[1] s0 = {1}, int64[1] e0 = {3}, "
      "int64 i0 = {0}, int64[1] zero = {0}>",
      "s = Shape(x)\n n = Gather(s, i0)\n c = Gather(s, i1)\n h = Gather(s, i2)\n ch = Slice(s, s0, e0)\n"
      "m = ReduceProd<keepdims = 1>(ch)\n nu = Unsqueeze(n, zero)\n cu = Unsqueeze(c, zero)\n"
      "k = Mul(cu, h)\n t = Concat<axis = 0>(nu, k)\n y = Reshape(x, t)\n");
  auto g = graph_from_text(text);
  auto reference = graph_from_text(text);
  EXPECT_TRUE(run_pass(*pass, *g));
  // Gather(s, 0) reads the dynamic N and stays; the others read 3 and 4 and fold.
  EXPECT_EQ(canonical(*g),
            "n0 = Shape(%x)\n"
            "n1 = Gather(n0, const int64[]{0})\n"
            "n2 = Unsqueeze(n1, const int64[1]{0})\n"
            "n3 = Unsqueeze(const int64[]{3}, const int64[1]{0})\n"
            "n4 = Mul(n3, const int64[1]{4})\n"
            "n5 = Concat(n2, n4) axis=0\n"
            "n6 = Reshape(%x, n5)\n"
            "return n6\n");
  EXPECT_FALSE(run_pass(*pass, *g));
  concretize(*g, 2);
  concretize(*reference, 2);
  testing::expect_same_outputs(*reference, *g);
}

TEST(FoldShapeComputations, KeepsDynamicDims) {
  auto pass = make_fold_shape_computations();
  expect_unchanged(*pass, KILN_GRAPH("(float[N,3] x) => (int64[2] y)", "y = Shape(x)"));
  expect_unchanged(*pass, KILN_GRAPH("(float[N,3] x) => (int64 y)", "y = Size(x)"));
  expect_unchanged(*pass, KILN_GRAPH("(float[N,3] x) => (int64[1] y) <int64[1] i = {-2}>", "s = Shape(x)\n y = Gather(s, i)"));
  expect_unchanged(*pass, KILN_GRAPH("(float[N,3] x) => (int64[2] y) <int64[1] b = {0}, int64[1] e = {2}>",
                                     "s = Shape(x)\n y = Slice(s, b, e)"));
}

TEST(FoldShapeComputations, ThenConstantFoldingFinishesTheChain) {
  auto shapes = make_fold_shape_computations();
  auto folding = make_constant_folding();
  auto dead = make_eliminate_dead_code();
  auto g = graph_from_text(KILN_GRAPH(
      "(float[N,3,4] x) => (float[N,12] y) <int64[1] b = {1}, int64[1] e = {3}, int64[1] neg = {-1}>",
      "s = Shape(x)\n d = Slice(s, b, e)\n p = ReduceProd<keepdims = 1>(d)\n t = Concat<axis = 0>(neg, p)\n"
      "y = Reshape(x, t)"));
  EXPECT_TRUE(run_pass(*shapes, *g));
  EXPECT_TRUE(run_pass(*folding, *g));
  run_pass(*dead, *g);
  EXPECT_EQ(canonical(*g), "n0 = Reshape(%x, const int64[2]{-1,12})\nreturn n0\n");
}

}  // namespace
}  // namespace kiln::passes
