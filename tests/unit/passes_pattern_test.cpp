// fuse_layernorm, fuse_gelu, fuse_softmax (src/passes/fuse_*.cpp): graphs before/after,
// numbers, and the cases where a rule must not fire.
#include <gtest/gtest.h>

#include <random>
#include <sstream>

#include "pass_test_util.h"
#include "passes/passes.h"

namespace kiln::passes {
namespace {

using testing::canonical;
using testing::count_ops;
using testing::graph_from_text;

// Runs `pass` on `before` and expects the canonical form of `after`, the same numbers as
// the original, and nothing more to do on a second run. Returns the rewritten graph.
std::unique_ptr<ir::Graph> expect_rewrite(Pass& pass, const std::string& before, const std::string& after,
                                          double tol = 1e-5) {
  auto g = graph_from_text(before);
  const auto original = graph_from_text(before);
  EXPECT_TRUE(testing::run_pass(pass, *g));
  EXPECT_EQ(canonical(*g), canonical(*graph_from_text(after)));
  testing::expect_same_outputs(*original, *g, 1, tol, tol);
  EXPECT_FALSE(testing::run_pass(pass, *g)) << "a second run must change nothing";
  return g;
}

void expect_no_rewrite(Pass& pass, const std::string& text) {
  auto g = graph_from_text(text);
  const std::string before = canonical(*g);
  EXPECT_FALSE(testing::run_pass(pass, *g));
  EXPECT_EQ(canonical(*g), before);
}

const ir::Node& only_node(const ir::Graph& g) {
  EXPECT_EQ(g.nodes().size(), 1u);
  return *g.nodes().front();
}

// ---- fuse_layernorm ----

// The PyTorch export at opset 17: ReduceMean takes axes as an attribute (canonicalized into an
// input by the importer), Pow(d, 2), then the affine tail.
TEST(FuseLayerNorm, PowFormWithAffineTail) {
  auto pass = make_fuse_layernorm();
  auto g = expect_rewrite(*pass, R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2,3,4] x) => (float[2,3,4] y)
  <float[4] gamma = {1.0, 2.0, -1.0, 0.5}, float[4] beta = {0.1, 0.2, 0.3, 0.4}, float two = {2.0}, float eps = {1e-5}> {
  mean = ReduceMean<axes = [-1]>(x)
  d = Sub(x, mean)
  sq = Pow(d, two)
  var = ReduceMean<axes = [-1]>(sq)
  ve = Add(var, eps)
  s = Sqrt(ve)
  n = Div(d, s)
  scaled = Mul(n, gamma)
  y = Add(beta, scaled)
})",
                          R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2,3,4] x) => (float[2,3,4] y) <float[4] gamma = {1.0, 2.0, -1.0, 0.5}, float[4] beta = {0.1, 0.2, 0.3, 0.4}> {
  y = LayerNormalization<axis = -1, epsilon = 1e-5>(x, gamma, beta)
})",
                          1e-4);
  EXPECT_EQ(only_node(*g).opset, 17);
  EXPECT_EQ(g->outputs[0]->name, "y");
}

// Opset 18: axes as an input; d*d instead of Pow; two trailing axes; no affine tail (ones and
// zeros are synthesized at the normalized shape [3,2]); gamma of shape [2] broadcast to [3,2].
TEST(FuseLayerNorm, MulFormOverTwoAxesSynthesizesBias) {
  auto pass = make_fuse_layernorm();
  auto g = expect_rewrite(*pass, R"(
<ir_version: 8, opset_import: ["" : 18]>
g (float[2,3,2] x) => (float[2,3,2] y) <int64[2] axes = {1, 2}, float eps = {1e-3}, float[2] gamma = {2.0, 3.0}> {
  mean = ReduceMean(x, axes)
  d = Sub(x, mean)
  sq = Mul(d, d)
  var = ReduceMean(sq, axes)
  ve = Add(eps, var)
  s = Sqrt(ve)
  n = Div(d, s)
  y = Mul(gamma, n)
})",
                          R"(
<ir_version: 8, opset_import: ["" : 18]>
g (float[2,3,2] x) => (float[2,3,2] y)
  <float[3,2] scale = {2.0, 3.0, 2.0, 3.0, 2.0, 3.0}, float[3,2] bias = {0, 0, 0, 0, 0, 0}> {
  y = LayerNormalization<axis = -2, epsilon = 1e-3>(x, scale, bias)
})",
                          1e-4);
  EXPECT_EQ(only_node(*g).opset, 18) << "at least 17, and never below the model's opset";
}

constexpr const char* kLayerNormOverAxis1 = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2,3,4] x) => (float[2,3,4] y) <float two = {2.0}, float eps = {1e-5}> {
  mean = ReduceMean<axes = [1]>(x)
  d = Sub(x, mean)
  sq = Pow(d, two)
  var = ReduceMean<axes = [1]>(sq)
  ve = Add(var, eps)
  s = Sqrt(ve)
  y = Div(d, s)
})";

TEST(FuseLayerNorm, NotOverLeadingAxis) {
  auto pass = make_fuse_layernorm();
  expect_no_rewrite(*pass, kLayerNormOverAxis1);
}

TEST(FuseLayerNorm, NotWhenReductionsDisagree) {
  auto pass = make_fuse_layernorm();
  // The mean over the last axis, the variance over axis 1.
  expect_no_rewrite(*pass, R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2,3,4] x) => (float[2,3,4] y) <float two = {2.0}, float eps = {1e-5}> {
  mean = ReduceMean<axes = [-1]>(x)
  d = Sub(x, mean)
  sq = Pow(d, two)
  var = ReduceMean<axes = [1]>(sq)
  ve = Add(var, eps)
  s = Sqrt(ve)
  y = Div(d, s)
})");
  // keepdims = 0 on the mean.
  expect_no_rewrite(*pass, R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2,4] x) => (float[2,4] y) <float two = {2.0}, float eps = {1e-5}> {
  mean = ReduceMean<axes = [0], keepdims = 0>(x)
  d = Sub(x, mean)
  sq = Pow(d, two)
  var = ReduceMean<axes = [-1]>(sq)
  ve = Add(var, eps)
  s = Sqrt(ve)
  y = Div(d, s)
})");
}

TEST(FuseLayerNorm, NotWhenCenteredValueIsReadElsewhere) {
  auto pass = make_fuse_layernorm();
  expect_no_rewrite(*pass, R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2,4] x) => (float[2,4] y, float[2,4] d) <float two = {2.0}, float eps = {1e-5}> {
  mean = ReduceMean<axes = [-1]>(x)
  d = Sub(x, mean)
  sq = Pow(d, two)
  var = ReduceMean<axes = [-1]>(sq)
  ve = Add(var, eps)
  s = Sqrt(ve)
  y = Div(d, s)
})");
}

// ---- fuse_gelu ----

constexpr const char* kGeluAfter = R"(
<ir_version: 8, opset_import: ["" : 20]>
g (float[2,5] x) => (float[2,5] y) {
  y = Gelu(x)
})";

// torch: x * 0.5 * (1.0 + torch.erf(x / math.sqrt(2.0)))
TEST(FuseGelu, TorchErfForm) {
  auto pass = make_fuse_gelu();
  auto g = expect_rewrite(*pass, R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2,5] x) => (float[2,5] y) <float r2 = {1.4142135}, float one = {1.0}, float half = {0.5}> {
  a = Div(x, r2)
  e = Erf(a)
  p = Add(e, one)
  m = Mul(x, p)
  y = Mul(m, half)
})",
                          kGeluAfter);
  EXPECT_EQ(only_node(*g).opset, 20);
}

// 0.5 * x first, 1/sqrt(2) as a multiplier written to 4 digits, operands swapped.
TEST(FuseGelu, HalfFirstAndReciprocalSqrt2) {
  auto pass = make_fuse_gelu();
  expect_rewrite(*pass, R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2,5] x) => (float[2,5] y) <float r = {0.70710678}, float one = {1.0}, float half = {0.5}> {
  h = Mul(half, x)
  a = Mul(x, r)
  e = Erf(a)
  p = Add(one, e)
  y = Mul(p, h)
})",
                 kGeluAfter);
}

// x * ((1 + erf) * 0.5)
TEST(FuseGelu, HalfOnTheSum) {
  auto pass = make_fuse_gelu();
  expect_rewrite(*pass, R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2,5] x) => (float[2,5] y) <float r2 = {1.4142}, float one = {1.0}, float half = {0.5}> {
  a = Div(x, r2)
  e = Erf(a)
  p = Add(e, one)
  q = Mul(p, half)
  y = Mul(x, q)
})",
                 kGeluAfter);
}

constexpr const char* kGeluTanhAfter = R"(
<ir_version: 8, opset_import: ["" : 20]>
g (float[2,5] x) => (float[2,5] y) {
  y = Gelu<approximate = "tanh">(x)
})";

// HuggingFace NewGELU: 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * pow(x, 3))))
TEST(FuseGelu, TanhApproximationWithPow) {
  auto pass = make_fuse_gelu();
  expect_rewrite(*pass, R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2,5] x) => (float[2,5] y)
  <float three = {3.0}, float c = {0.044715}, float k = {0.7978845608}, float one = {1.0}, float half = {0.5}> {
  h = Mul(half, x)
  cube = Pow(x, three)
  t = Mul(c, cube)
  inner = Add(x, t)
  arg = Mul(k, inner)
  th = Tanh(arg)
  p = Add(one, th)
  y = Mul(h, p)
})",
                 kGeluTanhAfter);
}

// x^3 as (x*x)*x, the product as x * ((1 + tanh) * 0.5).
TEST(FuseGelu, TanhApproximationWithCubeByMuls) {
  auto pass = make_fuse_gelu();
  expect_rewrite(*pass, R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2,5] x) => (float[2,5] y) <float c = {0.044715}, float k = {0.79788456}, float one = {1.0}, float half = {0.5}> {
  sq = Mul(x, x)
  cube = Mul(sq, x)
  t = Mul(cube, c)
  inner = Add(t, x)
  arg = Mul(inner, k)
  th = Tanh(arg)
  p = Add(th, one)
  q = Mul(p, half)
  y = Mul(x, q)
})",
                 kGeluTanhAfter);
}

TEST(FuseGelu, NotWithOtherConstants) {
  auto pass = make_fuse_gelu();
  // 0.6 where GELU has 0.5.
  expect_no_rewrite(*pass, R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2,5] x) => (float[2,5] y) <float r2 = {1.4142135}, float one = {1.0}, float half = {0.6}> {
  a = Div(x, r2)
  e = Erf(a)
  p = Add(e, one)
  m = Mul(x, p)
  y = Mul(m, half)
})");
  // Erf of x / 2 instead of x / sqrt(2); and a different x inside the Erf.
  expect_no_rewrite(*pass, R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2,5] x, float[2,5] z) => (float[2,5] y, float[2,5] w) <float r2 = {1.4142135}, float two = {2.0}, float one = {1.0}, float half = {0.5}> {
  a = Div(x, two)
  e = Erf(a)
  p = Add(e, one)
  m = Mul(x, p)
  y = Mul(m, half)
  a2 = Div(z, r2)
  e2 = Erf(a2)
  p2 = Add(e2, one)
  m2 = Mul(x, p2)
  w = Mul(m2, half)
})");
}

// ---- fuse_softmax ----

TEST(FuseSoftmax, StableForm) {
  auto pass = make_fuse_softmax();
  auto g = expect_rewrite(*pass, R"(
<ir_version: 8, opset_import: ["" : 11]>
g (float[2,3,4] x) => (float[2,3,4] y) {
  m = ReduceMax<axes = [-1]>(x)
  d = Sub(x, m)
  e = Exp(d)
  s = ReduceSum<axes = [2]>(e)
  y = Div(e, s)
})",
                          R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3,4] x) => (float[2,3,4] y) {
  y = Softmax<axis = 2>(x)
})");
  EXPECT_EQ(only_node(*g).opset, 13) << "opset 13 semantics: one axis, no 2-D coercion";
}

TEST(FuseSoftmax, PlainFormOverAxis1) {
  auto pass = make_fuse_softmax();
  expect_rewrite(*pass, R"(
<ir_version: 8, opset_import: ["" : 18]>
g (float[2,3,4] x) => (float[2,3,4] y) <int64[1] axes = {1}> {
  e = Exp(x)
  s = ReduceSum(e, axes)
  y = Div(e, s)
})",
                 R"(
<ir_version: 8, opset_import: ["" : 18]>
g (float[2,3,4] x) => (float[2,3,4] y) {
  y = Softmax<axis = 1>(x)
})");
}

// A max over another axis still leaves a correct softmax of (x - m).
TEST(FuseSoftmax, MaxOverAnotherAxisKeepsTheShift) {
  auto pass = make_fuse_softmax();
  expect_rewrite(*pass, R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[3,4] x) => (float[3,4] y) <int64[1] axes = {1}> {
  m = ReduceMax<axes = [0]>(x)
  d = Sub(x, m)
  e = Exp(d)
  s = ReduceSum(e, axes)
  y = Div(e, s)
})",
                 R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[3,4] x) => (float[3,4] y) {
  m = ReduceMax<axes = [0]>(x)
  d = Sub(x, m)
  y = Softmax<axis = 1>(d)
})");
}

TEST(FuseSoftmax, NotWhenExpIsReadElsewhereOrSumDropsTheAxis) {
  auto pass = make_fuse_softmax();
  expect_no_rewrite(*pass, R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[3,4] x) => (float[3,4] y, float[3,4] e) <int64[1] axes = {1}> {
  e = Exp(x)
  s = ReduceSum(e, axes)
  y = Div(e, s)
})");
  expect_no_rewrite(*pass, R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[4,4] x) => (float[4,4] y) <int64[1] axes = {1}> {
  e = Exp(x)
  s = ReduceSum<keepdims = 0>(e, axes)
  y = Div(e, s)
})");
}

// ---- all together ----

// "float[r,c] name = {...}" with seeded values in [-0.5, 0.5].
std::string matrix(const std::string& name, int rows, int cols, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-0.5f, 0.5f);
  std::ostringstream os;
  os << "float[" << rows << "," << cols << "] " << name << " = {";
  for (int i = 0; i < rows * cols; ++i) os << (i ? ", " : "") << dist(rng);
  os << "}";
  return os.str();
}

// A transformer-ish block as PyTorch exports it: LayerNorm spelled out, a projection, GELU
// (erf form), another projection with a residual, and a softmax.
TEST(PatternFusions, TransformerBlock) {
  const std::string text = std::string(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2,3,8] x) => (float[2,3,8] y) <)") +
                           matrix("w1", 8, 8, 1) + ", " + matrix("w2", 8, 8, 2) +
                           R"(, float[1,8] gamma = {1, 2, 0.5, -1, 1.5, 0.25, 1, 2}, float[8] b1 = {0.1, -0.2, 0.3, 0, 0.5, -0.1, 0.2, 0.05}, float two = {2.0},
    float eps = {1e-5}, float r2 = {1.4142135}, float one = {1.0}, float half = {0.5}, int64[1] last = {-1}> {
  mean = ReduceMean<axes = [-1]>(x)
  d = Sub(x, mean)
  sq = Pow(d, two)
  var = ReduceMean<axes = [-1]>(sq)
  ve = Add(var, eps)
  s = Sqrt(ve)
  n = Div(d, s)
  ln = Mul(n, gamma)
  h = MatMul(ln, w1)
  hb = Add(h, b1)
  a = Div(hb, r2)
  e = Erf(a)
  p = Add(e, one)
  m = Mul(hb, p)
  gl = Mul(m, half)
  o = MatMul(gl, w2)
  res = Add(o, x)
  mx = ReduceMax<axes = [-1]>(res)
  z = Sub(res, mx)
  ex = Exp(z)
  sm = ReduceSum(ex, last)
  y = Div(ex, sm)
})";
  auto g = graph_from_text(text);
  const auto original = graph_from_text(text);
  for (auto& pass : {make_fuse_layernorm(), make_fuse_gelu(), make_fuse_softmax(), make_fuse_elementwise()}) {
    testing::run_pass(*pass, *g);
  }
  EXPECT_EQ(canonical(*g),
            "n0 = LayerNormalization(%x, const float32[8]{1,2,0.5,-1,1.5,0.25,1,2}, const float32[8]{0,0,0,0,0,0,0,0}) "
            "axis=-1 epsilon=1e-05\n"
            "n1 = MatMul(n0, const float32[8,8])\n"
            "n2 = kiln.FusedElementwise(n1, const float32[8]{0.1,-0.2,0.3,0,0.5,-0.1,0.2,0.05}) body={"
            "n0 = Add(%h, %b1)\nn1 = Gelu(n0)\nreturn n1\n}\n"
            "n3 = MatMul(n2, const float32[8,8])\n"
            "n4 = Add(n3, %x)\n"
            "n5 = Softmax(n4) axis=2\n"
            "return n5\n");
  testing::expect_same_outputs(*original, *g, 1, 1e-4, 1e-4);
}

}  // namespace
}  // namespace kiln::passes
