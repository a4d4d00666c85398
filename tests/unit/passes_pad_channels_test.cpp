// pad_conv_channels (src/passes/pad_conv_channels.cpp): a 3-channel fp16 channels-last
// convolution gets a Pad to 8 channels and zero-padded weights, with exactly the same output.
#include <gtest/gtest.h>

#include "builder/optimize.h"
#include "pass_test_util.h"
#include "passes/passes.h"

namespace kiln::passes {
namespace {

using testing::count_ops;
using testing::graph_from_text;

// An RGB stem: a strided 3x3 convolution, 3 -> 4 channels, with bias and Relu.
const char* kStem = R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2,3,9,9] x) => (float[2,4,5,5] y)
<float[4,3,3,3] w1 = {0.1, -0.2, 0.3, 0.4, -0.5, 0.6, 0.7, -0.8, 0.9, 0.1, 0.2, -0.3, 0.4, 0.5, -0.6, 0.7, 0.8, -0.9,
  0.2, 0.3, -0.4, 0.5, 0.6, -0.7, 0.8, 0.9, -0.1, 0.3, -0.4, 0.5, 0.6, -0.7, 0.8, 0.9, -0.1, 0.2,
  0.5, 0.6, -0.7, 0.8, 0.9, -0.1, 0.2, 0.3, -0.4, 0.6, -0.7, 0.8, 0.9, -0.1, 0.2, 0.3, -0.4, 0.5,
  0.7, 0.8, -0.9, 0.1, 0.2, -0.3, 0.4, 0.5, -0.6, 0.8, -0.9, 0.1, 0.2, -0.3, 0.4, 0.5, -0.6, 0.7,
  0.9, 0.1, -0.2, 0.3, 0.4, -0.5, 0.6, 0.7, -0.8, 0.1, -0.2, 0.3, 0.4, -0.5, 0.6, 0.7, -0.8, 0.9,
  0.2, -0.3, 0.4, 0.5, -0.6, 0.7, 0.8, -0.9, 0.1, 0.3, 0.4, -0.5, 0.6, 0.7, -0.8, 0.9, 0.1, -0.2},
 float[4] b1 = {0.1, -0.1, 0.2, -0.2}>
{
  c = Conv<pads = [1, 1, 1, 1], strides = [2, 2]>(x, w1, b1)
  y = Relu(c)
})";

std::unique_ptr<ir::Graph> optimized(bool with_padding) {
  auto g = graph_from_text(kStem);
  builder::OptimizeOptions o;
  o.backend = "cuda";
  o.precision = "fp16";
  if (!with_padding) o.disabled_passes.insert("pad_conv_channels");
  const Status st = builder::optimize_graph(*g, o);
  EXPECT_TRUE(st.ok()) << st.to_string();
  return g;
}

TEST(PadConvChannels, RgbStemGetsEightChannelsAndSameNumbers) {
  auto plain = optimized(false);
  auto padded = optimized(true);
  EXPECT_EQ(count_ops(*plain, "Pad"), 0);
  EXPECT_EQ(count_ops(*padded, "Pad"), 1);
  for (const auto& n : padded->nodes()) {
    if (n->op_type == "FusedConv") {
      ASSERT_TRUE(n->input(1)->constant);
      EXPECT_EQ(n->input(1)->constant->dim(1), 8);
      EXPECT_EQ(n->input(0)->type.concrete().back(), 8);
    }
  }
  // Zero channels times zero weights add exact zeros: the outputs are bit-identical.
  testing::expect_same_outputs(*plain, *padded, 1, 0.0, 0.0);
}

TEST(PadConvChannels, NotOnTheCpuOrInFp32) {
  auto g = graph_from_text(kStem);
  builder::OptimizeOptions o;
  o.backend = "cuda";
  o.precision = "fp32";
  ASSERT_TRUE(builder::optimize_graph(*g, o).ok());
  EXPECT_EQ(count_ops(*g, "Pad"), 0);
  auto c = graph_from_text(kStem);
  builder::OptimizeOptions cpu;
  cpu.precision = "fp16";
  ASSERT_TRUE(builder::optimize_graph(*c, cpu).ok());
  EXPECT_EQ(count_ops(*c, "Pad"), 0);
}

TEST(PadConvChannels, SecondRunChangesNothing) {
  auto g = optimized(true);
  auto pass = make_pad_conv_channels();
  EXPECT_FALSE(testing::run_pass(*pass, *g));
}

}  // namespace
}  // namespace kiln::passes
