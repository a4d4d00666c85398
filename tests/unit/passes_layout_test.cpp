// assign_layout (src/passes/assign_layout.cpp) and kiln.ChannelsLastPool.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <sstream>

#include "builder/optimize.h"
#include "onnx/importer.h"
#include "runtime/shape_inference.h"
#include "pass_test_util.h"
#include "passes/passes.h"

namespace kiln::passes {
namespace {

using testing::canonical;
using testing::count_ops;
using testing::graph_from_text;

// "<float[2,3] name = {...}>" with seeded values in [-0.5, 0.5] (initializers are too large to
// write by hand).
std::string initializer(const std::string& name, const std::vector<int>& shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-0.5f, 0.5f);
  std::ostringstream os;
  int n = 1;
  os << "float[";
  for (size_t i = 0; i < shape.size(); ++i) {
    os << (i ? "," : "") << shape[i];
    n *= shape[i];
  }
  os << "] " << name << " = {";
  for (int i = 0; i < n; ++i) os << (i ? ", " : "") << dist(rng);
  os << "}";
  return os.str();
}

// Weights of the ResNet-like block below: 4 channels, 3x3 convs, a 4 -> 3 Gemm.
std::string block_weights() {
  return "<" + initializer("w1", {4, 4, 3, 3}, 1) + ", " + initializer("b1", {4}, 2) + ", " +
         initializer("w2", {4, 4, 3, 3}, 3) + ", " + initializer("b2", {4}, 4) + ", " +
         initializer("wg", {3, 4}, 5) + ", " + initializer("bg", {3}, 6) + ">";
}

const char* kHeader = R"(<ir_version: 8, opset_import: ["" : 17, "kiln" : 1]>)";

// conv-relu-conv-add-relu-pool-flatten-gemm, the convolutions already fused (as the pipeline
// gives them to the layout pass).
std::string resnet_block() {
  return std::string(kHeader) + "\ng (float[1,4,8,8] x) => (float[1,3] y) " + block_weights() + R"( {
  c1 = kiln.FusedConv<pads = [1, 1, 1, 1], channels_last = 0>(x, w1, b1)
  r1 = Relu(c1)
  c2 = kiln.FusedConv<pads = [1, 1, 1, 1], channels_last = 0>(r1, w2, b2)
  s = Add(c2, x)
  r2 = Relu(s)
  p = GlobalAveragePool(r2)
  f = Flatten(p)
  y = Gemm<transB = 1>(f, wg, bg)
})";
}

// What the block must become: one Transpose in, one before Flatten.
std::string resnet_block_channels_last() {
  return std::string(kHeader) + "\ng (float[1,4,8,8] x) => (float[1,3] y) " + block_weights() + R"( {
  xt = Transpose<perm = [0, 2, 3, 1]>(x)
  c1 = kiln.FusedConv<pads = [1, 1, 1, 1], channels_last = 1>(xt, w1, b1)
  r1 = Relu(c1)
  c2 = kiln.FusedConv<pads = [1, 1, 1, 1], channels_last = 1>(r1, w2, b2)
  s = Add(c2, xt)
  r2 = Relu(s)
  p = kiln.ChannelsLastPool<mode = "GlobalAveragePool">(r2)
  pt = Transpose<perm = [0, 3, 1, 2]>(p)
  f = Flatten(pt)
  y = Gemm<transB = 1>(f, wg, bg)
})";
}

// Runs the pass on the graph of `text` and checks it kept the numbers and is idempotent.
std::unique_ptr<ir::Graph> run_layout(const std::string& text, bool expect_change = true) {
  auto before = graph_from_text(text);
  auto g = graph_from_text(text);
  auto pass = make_assign_layout();
  EXPECT_EQ(testing::run_pass(*pass, *g), expect_change);
  testing::expect_same_outputs(*before, *g);
  EXPECT_FALSE(testing::run_pass(*pass, *g)) << "a second run must change nothing";
  return g;
}

TEST(AssignLayout, ResNetBlockHasOneTransposeInAndOneOut) {
  auto g = run_layout(resnet_block());
  EXPECT_EQ(count_ops(*g, "Transpose"), 2);
  EXPECT_EQ(canonical(*g), canonical(*graph_from_text(resnet_block_channels_last())));
}

TEST(AssignLayout, GraphWithoutConvIsUnchanged) {
  const std::string text = std::string(kHeader) + R"(
g (float[1,4,8,8] x) => (float[1,4,4,4] y) {
  r = Relu(x)
  y = MaxPool<kernel_shape = [2, 2], strides = [2, 2]>(r)
})";
  auto g = run_layout(text, /*expect_change=*/false);
  EXPECT_EQ(canonical(*g), canonical(*graph_from_text(text)));
}

// A graph output produced channels-last gets its layout back under its own name; a value read
// both by a conv and by a layout-sensitive op is transposed back once.
TEST(AssignLayout, GraphOutputsKeepChannelsFirst) {
  const std::string text = std::string(kHeader) + "\ng (float[1,4,8,8] x) => (float[1,4,8,8] y, float[1,256] z) " +
                           block_weights() + R"( {
  c1 = kiln.FusedConv<pads = [1, 1, 1, 1], activation = "Relu">(x, w1, b1)
  y = kiln.FusedConv<pads = [1, 1, 1, 1]>(c1, w2, b2)
  z = Flatten(c1)
})";
  auto g = run_layout(text);
  EXPECT_EQ(count_ops(*g, "Transpose"), 3);  // x in; c1 and y out
  EXPECT_EQ(g->outputs[0]->name, "y");
  EXPECT_EQ(g->outputs[0]->producer->op_type, "Transpose");
  EXPECT_EQ(g->outputs[0]->type.to_string(), "float32[1,4,8,8]");
}

// A per-channel constant operand is permuted at build time; a Concat on channels is remapped;
// a Softmax on channels stays channels-first.
TEST(AssignLayout, CarriesConstantsAndConcat) {
  const std::string text = std::string(kHeader) + "\ng (float[1,4,8,8] x) => (float[1,8,8,8] y) <" +
                           initializer("w1", {4, 4, 3, 3}, 1) + ", " + initializer("b1", {4}, 2) + ", " +
                           initializer("scale", {4, 1, 1}, 3) + R"(, float half = {0.5}> {
  c1 = kiln.FusedConv<pads = [1, 1, 1, 1]>(x, w1, b1)
  m = Mul(c1, scale)
  h = Mul(m, half)
  k = Sigmoid(h)
  c2 = kiln.FusedConv<pads = [1, 1, 1, 1]>(m, w1, b1)
  cat = Concat<axis = 1>(k, c2)
  y = Softmax<axis = 1>(cat)
})";
  auto g = run_layout(text);
  EXPECT_EQ(count_ops(*g, "Transpose"), 2);
  int permuted_scales = 0;
  for (const auto& n : g->nodes()) {
    if (n->op_type == "Concat") EXPECT_EQ(n->attr_i("axis", 0), 3);
    if (n->op_type == "Mul" && n->input(1)->is_constant()) {
      permuted_scales += n->input(1)->constant->shape() == std::vector<int64_t>{1, 1, 1, 4};
    }
  }
  EXPECT_EQ(permuted_scales, 1);
}

// Max and average pools with windows, strides and pads run channels-last and agree with the
// plain pools.
TEST(AssignLayout, WindowPoolsAgree) {
  const std::string text = std::string(kHeader) + "\ng (float[2,4,9,7] x) => (float[2,4,4,3] y) <" +
                           initializer("w1", {4, 4, 3, 3}, 1) + ", " + initializer("b1", {4}, 2) + R"(> {
  c1 = kiln.FusedConv<pads = [1, 1, 1, 1]>(x, w1, b1)
  m = MaxPool<kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]>(c1)
  a = AveragePool<kernel_shape = [2, 2], strides = [1, 1], count_include_pad = 1>(m)
  y = Relu(a)
})";
  auto g = run_layout(text);
  EXPECT_EQ(count_ops(*g, "ChannelsLastPool"), 2);
  EXPECT_EQ(count_ops(*g, "Transpose"), 2);
}

// An FPN-like upsampling (Resize by scales, then Add) and a channel padding by a constant
// Concat stay channels-last.
TEST(AssignLayout, CarriesResizeAndConstantConcat) {
  const std::string text = std::string(kHeader) + "\ng (float[1,4,4,4] x, float[1,4,8,8] x2) => (float[1,8,8,8] y) <" +
                           initializer("w1", {4, 4, 3, 3}, 1) + ", " + initializer("b1", {4}, 2) + ", " +
                           initializer("zeros", {1, 4, 8, 8}, 3) + R"(, float[4] scales = {1, 1, 2, 2}> {
  c1 = kiln.FusedConv<pads = [1, 1, 1, 1]>(x, w1, b1)
  up = Resize<mode = "linear">(c1, , scales)
  c2 = kiln.FusedConv<pads = [1, 1, 1, 1]>(x2, w1, b1)
  s = Add(up, c2)
  y = Concat<axis = 1>(s, zeros)
})";
  auto g = run_layout(text);
  EXPECT_EQ(count_ops(*g, "Transpose"), 3);  // x and x2 in, y out
}

// A MaxPool with an Indices output stays channels-first.
TEST(AssignLayout, MaxPoolWithIndicesStays) {
  const std::string text = std::string(kHeader) + "\ng (float[1,4,8,8] x) => (float[1,4,4,4] y, int64[1,4,4,4] i) <" +
                           initializer("w1", {4, 4, 3, 3}, 1) + ", " + initializer("b1", {4}, 2) + R"(> {
  c1 = kiln.FusedConv<pads = [1, 1, 1, 1]>(x, w1, b1)
  y, i = MaxPool<kernel_shape = [2, 2], strides = [2, 2]>(c1)
})";
  auto g = run_layout(text);
  EXPECT_EQ(count_ops(*g, "MaxPool"), 1);
  EXPECT_EQ(count_ops(*g, "Transpose"), 2);
}

TEST(ChannelsLastPool, BadModeIsAnError) {
  const std::string text = std::string(kHeader) + R"(
g (float[1,8,8,4] x) => (float[1,4,4,4] y) {
  y = kiln.ChannelsLastPool<mode = "Softmax">(x)
})";
  EXPECT_THROW(graph_from_text(text), std::runtime_error);
}

// The whole -O2 pipeline on ResNet-50 with prefer_channels_last leaves 2 Transposes.
TEST(AssignLayout, ResNet50HasTwoTransposes) {
  // The repository root, from this file's path (tests/unit/).
  const std::string path =
      (std::filesystem::path(__FILE__).parent_path().parent_path().parent_path() / "models" / "resnet50.onnx").string();
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " is missing (scripts/fetch_models.sh)";
  std::unique_ptr<ir::Graph> g;
  ASSERT_TRUE(onnx_io::import_model_file(path, &g).ok());
  ASSERT_TRUE(runtime::infer_graph_types(*g).ok());
  builder::OptimizeOptions opt;
  opt.prefer_channels_last = true;
  ASSERT_TRUE(builder::optimize_graph(*g, opt).ok());
  if (count_ops(*g, "FusedConv") == 0) GTEST_SKIP() << "the pipeline does not fuse convolutions yet";
  EXPECT_EQ(count_ops(*g, "Transpose"), 2);
  for (const auto& n : g->nodes()) {
    if (n->op_type == "FusedConv") EXPECT_EQ(n->attr_i("channels_last", 0), 1) << n->describe();
  }
}

}  // namespace
}  // namespace kiln::passes
