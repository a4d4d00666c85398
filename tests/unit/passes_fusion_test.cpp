// The weight-folding and epilogue-fusion passes: fold_batchnorm, fold_channel_affine,
// matmul_add_to_gemm, fuse_conv_bias_activation, fuse_gemm_activation. Each case compares the
// rewritten graph with the expected one, checks the numbers on random inputs, and checks that a
// second run changes nothing; the "NotWhen" cases must leave the graph alone.
#include <gtest/gtest.h>

#include <random>
#include <sstream>

#include "pass_test_util.h"
#include "passes/passes.h"

namespace kiln::passes {
namespace {

using testing::canonical;
using testing::graph_from_text;

// "float[2,3] name = {...}" with values from a fixed seed, for a graph's initializer list.
std::string init(const std::string& name, const std::vector<int64_t>& shape, uint32_t seed, float lo = -1,
                 float hi = 1, const std::string& type = "float") {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::ostringstream os;
  os << type << (shape.empty() ? "" : "[");
  int64_t n = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    os << (i ? "," : "") << shape[i];
    n *= shape[i];
  }
  os << (shape.empty() ? " " : "] ") << name << " = {";
  for (int64_t i = 0; i < n; ++i) os << (i ? ", " : "") << dist(rng);
  os << "}";
  return os.str();
}

std::string model(const std::string& signature, const std::vector<std::string>& inits, const std::string& body) {
  std::string text = "<ir_version: 8, opset_import: [\"\" : 17, \"kiln\" : 1]>\ng " + signature + "\n";
  if (!inits.empty()) {
    text += "<";
    for (size_t i = 0; i < inits.size(); ++i) text += (i ? ", " : "") + inits[i];
    text += ">\n";
  }
  return text + "{\n" + body + "\n}";
}

// Runs `pass` on `before`: expects the structure of `after`, the same outputs, and a no-op rerun.
void expect_rewrite(Pass& pass, const std::string& before, const std::string& after, double tol = 1e-5) {
  auto g = graph_from_text(before);
  auto original = graph_from_text(before);
  ASSERT_TRUE(testing::run_pass(pass, *g)) << pass.name() << " did not fire";
  EXPECT_EQ(canonical(*g), canonical(*graph_from_text(after)));
  testing::expect_same_outputs(*original, *g, 1, tol, tol);
  EXPECT_FALSE(testing::run_pass(pass, *g)) << "a second run must change nothing";
}

void expect_unchanged(Pass& pass, const std::string& text) {
  auto g = graph_from_text(text);
  const std::string before = canonical(*g);
  EXPECT_FALSE(testing::run_pass(pass, *g));
  EXPECT_EQ(canonical(*g), before);
}

// --- fold_batchnorm ------------------------------------------------------------------------------

// "float[shape] name = {values}" with exact values.
std::string exact(const std::string& name, const std::vector<int64_t>& shape, const std::vector<double>& values) {
  std::ostringstream os;
  os.precision(17);
  os << "float[";
  for (size_t i = 0; i < shape.size(); ++i) os << (i ? "," : "") << shape[i];
  os << "] " << name << " = {";
  for (size_t i = 0; i < values.size(); ++i) os << (i ? ", " : "") << values[i];
  os << "}";
  return os.str();
}

std::vector<double> ramp(int64_t n, double step, double start = 0) {
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(start + step * static_cast<double>(i));
  return v;
}

// BN parameters whose folded values are exact in float (with epsilon 0): per channel i the
// scale s = {0.5, 1, 2}[i % 3] (scale 2s over sqrt(var 4)), mean i - 1, bias i / 4.
struct ExactBn {
  std::vector<double> s, mean, bias;
  std::vector<std::string> inits;

  explicit ExactBn(int64_t c) {
    std::vector<double> scale;
    for (int64_t i = 0; i < c; ++i) {
      s.push_back(0.5 * static_cast<double>(1 << (i % 3)));
      scale.push_back(2 * s.back());
    }
    mean = ramp(c, 1, -1);
    bias = ramp(c, 0.25);
    inits = {exact("s", {c}, scale), exact("bb", {c}, bias), exact("mean", {c}, mean),
             exact("var", {c}, std::vector<double>(static_cast<size_t>(c), 4.0))};
  }
  // The folded bias s * old + (bias - s * mean), `old` scaled by `beta` first.
  std::vector<double> fold(const std::vector<double>& old, double beta = 1) const {
    std::vector<double> out;
    for (size_t i = 0; i < s.size(); ++i) out.push_back(s[i] * beta * (old.empty() ? 0 : old[i]) + bias[i] - s[i] * mean[i]);
    return out;
  }
};

const char* kBn = "y = BatchNormalization <epsilon = 0.0> (c, s, bb, mean, var)";

std::vector<std::string> plus(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(FoldBatchNorm, IntoConv) {
  auto pass = make_fold_batchnorm();
  const std::string sig = "(float[1,2,5,5] x) => (float[1,3,5,5] y)";
  const ExactBn bn(3);
  const std::vector<double> b = ramp(3, 0.5);
  expect_rewrite(*pass,
                 model(sig, plus({init("w", {3, 2, 3, 3}, 1), exact("b", {3}, b)}, bn.inits),
                       std::string("c = Conv <pads = [1, 1, 1, 1]> (x, w, b)\n") + kBn),
                 model(sig, {init("w", {3, 2, 3, 3}, 1), exact("b", {3}, bn.fold(b))},
                       "y = Conv <pads = [1, 1, 1, 1]> (x, w, b)"));
  // Without a bias the folded conv gets one.
  expect_rewrite(*pass, model(sig, plus({init("w", {3, 2, 3, 3}, 1)}, bn.inits), std::string("c = Conv <pads = [1, 1, 1, 1]> (x, w)\n") + kBn),
                 model(sig, {init("w", {3, 2, 3, 3}, 1), exact("b", {3}, bn.fold({}))},
                       "y = Conv <pads = [1, 1, 1, 1]> (x, w, b)"));
}

TEST(FoldBatchNorm, IntoGroupedConvTranspose) {
  auto pass = make_fold_batchnorm();
  const std::string sig = "(float[1,4,3,3] x) => (float[1,6,5,5] y)";
  const ExactBn bn(6);
  expect_rewrite(*pass, model(sig, plus({init("w", {4, 3, 3, 3}, 1)}, bn.inits), std::string("c = ConvTranspose <group = 2> (x, w)\n") + kBn),
                 model(sig, {init("w", {4, 3, 3, 3}, 1), exact("b", {6}, bn.fold({}))},
                       "y = ConvTranspose <group = 2> (x, w, b)"));
}

TEST(FoldBatchNorm, IntoGemm) {
  auto pass = make_fold_batchnorm();
  const std::string sig = "(float[2,5] x) => (float[2,4] y)";
  const ExactBn bn(4);
  // transB with a [1, N] C and beta != 1: C folds into a [1, N] bias with beta 1.
  const std::vector<double> c = ramp(4, 0.5, -1);
  expect_rewrite(*pass,
                 model(sig, plus({init("w", {4, 5}, 1), exact("cc", {1, 4}, c)}, bn.inits),
                       std::string("c = Gemm <transB = 1, beta = 0.5, alpha = 2.0> (x, w, cc)\n") + kBn),
                 model(sig, {init("w", {4, 5}, 1), exact("cc", {1, 4}, bn.fold(c, 0.5))},
                       "y = Gemm <transB = 1, beta = 1.0, alpha = 2.0> (x, w, cc)"));
  expect_rewrite(*pass, model(sig, plus({init("w", {5, 4}, 1)}, bn.inits), std::string("c = Gemm (x, w)\n") + kBn),
                 model(sig, {init("w", {5, 4}, 1), exact("cc", {4}, bn.fold({}))}, "y = Gemm <beta = 1.0> (x, w, cc)"));
}

TEST(FoldBatchNorm, NotWhenConvOutputFeedsTwoNodes) {
  auto pass = make_fold_batchnorm();
  expect_unchanged(*pass, model("(float[1,2,5,5] x) => (float[1,3,3,3] y, float[1,3,3,3] z)",
                                plus({init("w", {3, 2, 3, 3}, 1)}, ExactBn(3).inits),
                                "c = Conv (x, w)\ny = BatchNormalization (c, s, bb, mean, var)\nz = Relu (c)"));
}

TEST(FoldBatchNorm, NotWhenParametersAreNotConstant) {
  auto pass = make_fold_batchnorm();
  expect_unchanged(*pass, model("(float[1,2,5,5] x, float[3] mean) => (float[1,3,3,3] y)",
                                {init("w", {3, 2, 3, 3}, 1), init("s", {3}, 2), init("bb", {3}, 3), init("var", {3}, 4, 1, 2)},
                                "c = Conv (x, w)\ny = BatchNormalization (c, s, bb, mean, var)"));
  // Nor when the conv's weights are computed.
  expect_unchanged(*pass, model("(float[1,2,5,5] x, float[3,2,3,3] w) => (float[1,3,3,3] y)", ExactBn(3).inits,
                                "c = Conv (x, w)\ny = BatchNormalization (c, s, bb, mean, var)"));
}

TEST(FoldBatchNorm, NotInTrainingMode) {
  auto pass = make_fold_batchnorm();
  auto g = graph_from_text(model("(float[1,2,5,5] x) => (float[1,3,3,3] y, float[3] rm, float[3] rv)",
                                 plus({init("w", {3, 2, 3, 3}, 1)}, ExactBn(3).inits),
                                 "c = Conv (x, w)\n"
                                 "y, rm, rv = BatchNormalization <training_mode = 1> (c, s, bb, mean, var)"));
  EXPECT_FALSE(testing::run_pass(*pass, *g));
  EXPECT_EQ(testing::count_ops(*g, "BatchNormalization"), 1);
}

// --- fold_channel_affine -------------------------------------------------------------------------

TEST(FoldChannelAffine, MulAndAddPerChannel) {
  auto pass = make_fold_channel_affine();
  const std::string sig = "(float[1,2,5,5] x) => (float[1,3,3,3] y)";
  // b * k + a = {0.5, 1, 1.5} * {2, 0.5, -1} + {1, 2, 3}
  expect_rewrite(*pass,
                 model(sig,
                       {init("w", {3, 2, 3, 3}, 1), exact("b", {3}, {0.5, 1, 1.5}), exact("k", {3, 1, 1}, {2, 0.5, -1}),
                        exact("a", {1, 3, 1, 1}, {1, 2, 3})},
                       "c = Conv (x, w, b)\nm = Mul (k, c)\ny = Add (m, a)"),
                 model(sig, {init("w", {3, 2, 3, 3}, 1), exact("b", {3}, {2, 2.5, 1.5})}, "y = Conv (x, w, b)"));
  // A scalar Mul on a conv without bias leaves the bias out.
  expect_rewrite(*pass, model(sig, plus({init("w", {3, 2, 3, 3}, 1)}, {init("k", {}, 3)}), "c = Conv (x, w)\ny = Mul (c, k)"),
                 model(sig, {init("w", {3, 2, 3, 3}, 1)}, "y = Conv (x, w)"));
}

TEST(FoldChannelAffine, NotForOtherBroadcastsOrNonConstants) {
  auto pass = make_fold_channel_affine();
  const std::vector<std::string> conv = {init("w", {3, 2, 3, 3}, 1)};
  // Broadcast over the spatial dims, not the channels.
  expect_unchanged(*pass, model("(float[1,2,5,5] x) => (float[1,3,3,3] y)", plus(conv, {init("k", {1, 1, 3, 3}, 3)}),
                                "c = Conv (x, w)\ny = Mul (c, k)"));
  expect_unchanged(*pass, model("(float[1,2,5,5] x) => (float[1,3,3,3] y)", plus(conv, {init("k", {3, 1}, 3)}),
                                "c = Conv (x, w)\ny = Add (c, k)"));
  // Widening the result (a rank-5 constant) is not per channel either.
  expect_unchanged(*pass, model("(float[1,2,5,5] x) => (float[2,1,3,3,3] y)", plus(conv, {init("k", {2, 1, 3, 1, 1}, 3)}),
                                "c = Conv (x, w)\ny = Mul (c, k)"));
  expect_unchanged(*pass, model("(float[1,2,5,5] x, float[3,1,1] k) => (float[1,3,3,3] y)", conv,
                                "c = Conv (x, w)\ny = Mul (c, k)"));
}

// --- matmul_add_to_gemm --------------------------------------------------------------------------

TEST(MatMulAddToGemm, Rank2WithBias) {
  auto pass = make_matmul_add_to_gemm();
  const std::string sig = "(float[4,8] a) => (float[4,5] y)";
  const std::vector<std::string> inits = {init("b", {8, 5}, 1), init("c", {5}, 2)};
  expect_rewrite(*pass, model(sig, inits, "m = MatMul (a, b)\ny = Add (c, m)"), model(sig, inits, "y = Gemm (a, b, c)"));
  // A computed [M, 1] bias works too.
  expect_rewrite(*pass, model("(float[4,8] a, float[4,1] c) => (float[4,5] y)", {init("b", {8, 5}, 1)}, "m = MatMul (a, b)\ny = Add (m, c)"),
                 model("(float[4,8] a, float[4,1] c) => (float[4,5] y)", {init("b", {8, 5}, 1)}, "y = Gemm (a, b, c)"));
}

TEST(MatMulAddToGemm, NotForBatchedOrWideningOrComputedWeights) {
  auto pass = make_matmul_add_to_gemm();
  expect_unchanged(*pass, model("(float[2,4,8] a) => (float[2,4,5] y)", {init("b", {8, 5}, 1), init("c", {5}, 2)},
                                "m = MatMul (a, b)\ny = Add (m, c)"));
  expect_unchanged(*pass, model("(float[4,8] a) => (float[3,4,5] y)", {init("b", {8, 5}, 1), init("c", {3, 4, 5}, 2)},
                                "m = MatMul (a, b)\ny = Add (m, c)"));
  expect_unchanged(*pass, model("(float[4,8] a, float[8,5] b) => (float[4,5] y)", {init("c", {5}, 2)},
                                "m = MatMul (a, b)\ny = Add (m, c)"));
}

// --- fuse_conv_bias_activation -------------------------------------------------------------------

const std::string kReluAct = "activation = \"Relu\", activation_params = [0.0, 0.0]";

TEST(FuseConvBiasActivation, BiasResidualActivationInOrder) {
  auto pass = make_fuse_conv_bias_activation();
  const std::string sig = "(float[1,2,5,5] x, float[1,3,5,5] z) => (float[1,3,5,5] y)";
  const std::vector<std::string> inits = {init("w", {3, 2, 3, 3}, 1), init("k", {1, 3, 1, 1}, 2)};
  expect_rewrite(*pass,
                 model(sig, inits,
                       "c = Conv <pads = [1, 1, 1, 1]> (x, w)\nb = Add (c, k)\nr = Add (z, b)\ny = Relu (r)"),
                 model(sig, {init("w", {3, 2, 3, 3}, 1), init("k", {3}, 2)},
                       "y = kiln.FusedConv <pads = [1, 1, 1, 1], " + kReluAct + "> (x, w, k, z)"));
}

TEST(FuseConvBiasActivation, ResidualGoesToTheLaterOfTwoConvs) {
  auto pass = make_fuse_conv_bias_activation();
  const std::string sig = "(float[1,2,5,5] x) => (float[1,3,5,5] y)";
  const std::vector<std::string> inits = {init("w1", {3, 2, 1, 1}, 1), init("w2", {3, 2, 1, 1}, 2)};
  auto g = graph_from_text(model(sig, inits, "a = Conv (x, w1)\nb = Conv (x, w2)\ns = Add (a, b)\ny = Relu (s)"));
  auto original = graph_from_text(model(sig, inits, "a = Conv (x, w1)\nb = Conv (x, w2)\ns = Add (a, b)\ny = Relu (s)"));
  ASSERT_TRUE(testing::run_pass(*pass, *g));
  ASSERT_EQ(g->nodes().size(), 2u);
  const ir::Node& last = *g->nodes()[1];
  EXPECT_EQ(last.op_type, "FusedConv");
  EXPECT_EQ(last.input(1)->constant->data_as<float>()[0], original->find_value("w2")->constant->data_as<float>()[0]);
  EXPECT_EQ(last.input(3), g->nodes()[0]->output(0));
  EXPECT_EQ(last.attr_s("activation", ""), "Relu");
  testing::expect_same_outputs(*original, *g);
  EXPECT_FALSE(testing::run_pass(*pass, *g));
}

TEST(FuseConvBiasActivation, ActivationBeforeResidualStaysOutOfTheAdd) {
  auto pass = make_fuse_conv_bias_activation();
  const std::string sig = "(float[1,2,5,5] x, float[1,3,3,3] z) => (float[1,3,3,3] y)";
  expect_rewrite(*pass, model(sig, {init("w", {3, 2, 3, 3}, 1)}, "c = Conv (x, w)\nr = Relu (c)\ny = Add (r, z)"),
                 model(sig, {init("w", {3, 2, 3, 3}, 1)}, "r = kiln.FusedConv <" + kReluAct + "> (x, w)\ny = Add (r, z)"));
}

TEST(FuseConvBiasActivation, ActivationKinds) {
  auto pass = make_fuse_conv_bias_activation();
  const std::string sig = "(float[1,2,5,5] x) => (float[1,3,3,3] y)";
  const std::vector<std::string> w = {init("w", {3, 2, 3, 3}, 1)};
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"s = Sigmoid (c)\ny = Mul (s, c)", "activation = \"Silu\", activation_params = [0.0, 0.0]"},
      {"y = Clip (c, lo, hi)", "activation = \"Clip\", activation_params = [0.0, 6.0]"},
      {"y = LeakyRelu <alpha = 0.25> (c)", "activation = \"LeakyRelu\", activation_params = [0.25, 0.0]"},
      {"y = HardSigmoid (c)", "activation = \"HardSigmoid\", activation_params = [0.2, 0.5]"},
      {"y = Tanh (c)", "activation = \"Tanh\", activation_params = [0.0, 0.0]"},
  };
  for (const auto& [act, attrs] : cases) {
    expect_rewrite(*pass, model(sig, plus(w, {"float lo = {0.0}", "float hi = {6.0}"}), "c = Conv (x, w)\n" + act),
                   model(sig, w, "y = kiln.FusedConv <" + attrs + "> (x, w)"));
  }
}

TEST(FuseConvBiasActivation, NotForComputedClipBoundsOrDouble) {
  auto pass = make_fuse_conv_bias_activation();
  // The Conv still becomes a FusedConv, but the Clip stays.
  const std::string sig = "(float[1,2,5,5] x, float hi) => (float[1,3,3,3] y)";
  expect_rewrite(*pass, model(sig, {init("w", {3, 2, 3, 3}, 1)}, "c = Conv (x, w)\ny = Clip (c, , hi)"),
                 model(sig, {init("w", {3, 2, 3, 3}, 1)}, "c = kiln.FusedConv (x, w)\ny = Clip (c, , hi)"));
  expect_unchanged(*pass, model("(double[1,2,5,5] x) => (double[1,3,3,3] y)", {init("w", {3, 2, 3, 3}, 1, -1, 1, "double")},
                                "c = Conv (x, w)\ny = Relu (c)"));
}

// --- fuse_gemm_activation ------------------------------------------------------------------------

TEST(FuseGemmActivation, GemmAndRank2MatMul) {
  auto pass = make_fuse_gemm_activation();
  const std::string sig = "(float[4,8] a) => (float[4,5] y)";
  const std::vector<std::string> inits = {init("b", {5, 8}, 1), init("c", {5}, 2)};
  expect_rewrite(*pass, model(sig, inits, "g = Gemm <transB = 1> (a, b, c)\ny = Relu (g)"),
                 model(sig, inits, "y = kiln.FusedGemm <transB = 1, " + kReluAct + "> (a, b, c)"));
  expect_rewrite(*pass, model(sig, {init("b", {8, 5}, 1)}, "g = MatMul (a, b)\ny = Sigmoid (g)"),
                 model(sig, {init("b", {8, 5}, 1)},
                       "y = kiln.FusedGemm <activation = \"Sigmoid\", activation_params = [0.0, 0.0]> (a, b)"));
}

TEST(FuseGemmActivation, NotForBatchedMatMulOrSharedOutput) {
  auto pass = make_fuse_gemm_activation();
  expect_unchanged(*pass, model("(float[2,4,8] a) => (float[2,4,5] y)", {init("b", {8, 5}, 1)}, "g = MatMul (a, b)\ny = Relu (g)"));
  expect_unchanged(*pass, model("(float[4,8] a) => (float[4,5] y, float[4,5] z)", {init("b", {8, 5}, 1)},
                                "g = Gemm (a, b)\ny = Relu (g)\nz = Neg (g)"));
}

}  // namespace
}  // namespace kiln::passes
