// Convolution/pooling behaviour the ONNX conformance tests do not pin down: window resolution
// (auto_pad, ceil_mode, ConvTranspose output_shape with negative padding), static inference
// with symbolic dims, cost, attribute errors, fp16, grouped/1x1 fast paths, MaxPool indices in
// column-major order and LpPool's opset-1 float p.
#include "ops/conv_pool.h"

#include <gtest/gtest.h>

#include <cmath>

#include "op_test_util.h"
#include "ops/op_schema.h"

namespace kiln {
namespace {

using namespace testing;  // op_test_util.h

ops::WindowAttrs attrs_2d() {
  ops::WindowAttrs a;
  a.nsp = 2;
  a.strides = {1, 1};
  a.dilations = {1, 1};
  a.pads = {0, 0, 0, 0};
  a.output_padding = {0, 0};
  return a;
}

// Direct (naive) convolution of one [1, C, H, W] input, the oracle for the GEMM paths.
std::vector<float> naive_conv(const std::vector<float>& x, const std::vector<float>& w, int64_t c, int64_t h,
                              int64_t wd, int64_t m, int64_t group, int64_t k, int64_t stride, int64_t pad,
                              int64_t* oh_out) {
  const int64_t oh = (h + 2 * pad - k) / stride + 1, ow = (wd + 2 * pad - k) / stride + 1;
  const int64_t cg = c / group, mg = m / group;
  std::vector<float> y(static_cast<size_t>(m * oh * ow), 0.f);
  for (int64_t oc = 0; oc < m; ++oc) {
    const int64_t g = oc / mg;
    for (int64_t i = 0; i < oh; ++i) {
      for (int64_t j = 0; j < ow; ++j) {
        float s = 0;
        for (int64_t ic = 0; ic < cg; ++ic) {
          for (int64_t a = 0; a < k; ++a) {
            for (int64_t b = 0; b < k; ++b) {
              const int64_t yy = i * stride - pad + a, xx = j * stride - pad + b;
              if (yy < 0 || yy >= h || xx < 0 || xx >= wd) continue;
              s += x[((g * cg + ic) * h + yy) * wd + xx] * w[((oc * cg + ic) * k + a) * k + b];
            }
          }
        }
        y[(oc * oh + i) * ow + j] = s;
      }
    }
  }
  *oh_out = oh;
  return y;
}

std::vector<float> iota_values(int64_t n, float scale) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = std::sin(static_cast<float>(i) * scale);
  return v;
}

TEST(ConvPoolWindow, SameUpperAndLowerSplitOddPaddingOppositeWays) {
  ops::WindowAttrs a = attrs_2d();
  a.strides = {2, 2};
  ops::Window w;
  a.auto_pad = ops::AutoPad::kSameUpper;
  ASSERT_TRUE(ops::resolve_window(a, {4, 4}, {7, 8}, &w).ok());
  // out = ceil(7/2) = 4: total pad (4-1)*2+4-7 = 3; out = 4 along 8: total 2.
  EXPECT_EQ(w.out, (std::vector<int64_t>{4, 4}));
  EXPECT_EQ(w.pads, (std::vector<int64_t>{1, 1, 2, 1}));
  a.auto_pad = ops::AutoPad::kSameLower;
  ASSERT_TRUE(ops::resolve_window(a, {4, 4}, {7, 8}, &w).ok());
  EXPECT_EQ(w.pads, (std::vector<int64_t>{2, 1, 1, 1}));
}

TEST(ConvPoolWindow, ValidAndCeilMode) {
  ops::WindowAttrs a = attrs_2d();
  a.strides = {2, 2};
  a.auto_pad = ops::AutoPad::kValid;
  a.pads = {5, 5, 5, 5};  // ignored with VALID
  ops::Window w;
  ASSERT_TRUE(ops::resolve_window(a, {3, 3}, {8, 7}, &w).ok());
  EXPECT_EQ(w.out, (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(w.pads, (std::vector<int64_t>{0, 0, 0, 0}));

  a = attrs_2d();
  a.strides = {2, 2};
  a.ceil_mode = true;
  a.pads = {1, 0, 1, 0};
  // Dim 0: in 3, pads 1+1, kernel 2: ceil((3+2-2)/2)+1 = 3, but the 3rd window would start at
  // 2*2 - 1 = 3, inside the end padding, so it is dropped. Dim 1: in 5, no pads: ceil gives 3.
  ASSERT_TRUE(ops::resolve_window(a, {2, 2}, {3, 5}, &w).ok());
  EXPECT_EQ(w.out, (std::vector<int64_t>{2, 3}));
}

TEST(ConvPoolWindow, UnknownInputSizeGivesUnknownOutput) {
  ops::WindowAttrs a = attrs_2d();
  ops::Window w;
  ASSERT_TRUE(ops::resolve_window(a, {3, 3}, {-1, 10}, &w).ok());
  EXPECT_EQ(w.out, (std::vector<int64_t>{-1, 8}));
}

TEST(ConvPoolWindow, TransposeOutputShapeLargerThanNaturalExtendsTheEnd) {
  ops::WindowAttrs a = attrs_2d();
  a.strides = {3, 2};
  a.output_shape = {10, 8};
  ops::Window w;
  // natural = 3*(3-1)+3 = 9 (< 10) and 2*(3-1)+3 = 7 (< 8): total padding -1 each.
  ASSERT_TRUE(ops::resolve_transpose_window(a, {3, 3}, {3, 3}, &w).ok());
  EXPECT_EQ(w.out, (std::vector<int64_t>{10, 8}));
  EXPECT_EQ(w.pads, (std::vector<int64_t>{0, 0, -1, -1}));
}

TEST(ConvPoolWindow, TransposeSameUpperDoublesTheInput) {
  ops::WindowAttrs a = attrs_2d();
  a.strides = {2, 2};
  a.auto_pad = ops::AutoPad::kSameUpper;
  ops::Window w;
  ASSERT_TRUE(ops::resolve_transpose_window(a, {3, 3}, {3, 4}, &w).ok());
  EXPECT_EQ(w.out, (std::vector<int64_t>{6, 8}));
}

TEST(ConvInfer, KeepsSymbolicBatchAndComputesSpatialDims) {
  ir::Graph g;
  ir::Value* x = g.add_value("x", ir::TensorType(DType::kFloat32, {ir::Dim::named("N"), 3, 224, 224}));
  ir::Value* w = g.add_value("w", ir::TensorType::of(DType::kFloat32, {64, 3, 7, 7}));
  ir::Value* y = g.add_value("y");
  ir::Node* n = g.add_node("Conv", {x, w}, {y}, "conv1");
  n->opset = 17;
  n->attrs = {{"strides", ints_attr({2, 2})}, {"pads", ints_attr({3, 3, 3, 3})}};
  const ops::OpSchema* s = ops::OpRegistry::instance().find("", "Conv");
  ASSERT_NE(s, nullptr);
  ops::InferContext ctx{*n, {&x->type, &w->type}, {nullptr, nullptr}, std::vector<ir::TensorType>(1), {}};
  ctx.output_values.resize(1);
  ASSERT_TRUE(s->infer(ctx).ok());
  EXPECT_EQ(ctx.output_types[0].to_string(), "float32[N,64,112,112]");

  // Cost of ResNet-50's stem: 64 * 112*112 * 3 * 7*7 = 118 MMAC per image.
  const ir::TensorType xt = ir::TensorType::of(DType::kFloat32, {1, 3, 224, 224});
  const ir::TensorType yt = ir::TensorType::of(DType::kFloat32, {1, 64, 112, 112});
  const ops::Cost c = s->cost({*n, {&xt, &w->type}, {&yt}});
  EXPECT_DOUBLE_EQ(c.macs, 64.0 * 112 * 112 * 3 * 49);
  EXPECT_DOUBLE_EQ(c.bytes, 4.0 * (3 * 224 * 224 + 64 * 3 * 49 + 64 * 112 * 112));
}

TEST(ConvInfer, UnknownRankStaysUnknown) {
  ir::Graph g;
  ir::Value* x = g.add_value("x", ir::TensorType{});
  x->type.dtype = DType::kFloat32;
  ir::Value* w = g.add_value("w", ir::TensorType{});
  w->type.dtype = DType::kFloat32;
  ir::Node* n = g.add_node("Conv", {x, w}, {g.add_value("y")}, "c");
  const ops::OpSchema* s = ops::OpRegistry::instance().find("", "Conv");
  ops::InferContext ctx{*n, {&x->type, &w->type}, {nullptr, nullptr}, std::vector<ir::TensorType>(1), {}};
  ctx.output_values.resize(1);
  ASSERT_TRUE(s->infer(ctx).ok());
  EXPECT_FALSE(ctx.output_types[0].has_rank());
}

TEST(Conv, GroupedStridedPaddedMatchesNaive) {
  const int64_t c = 4, h = 7, wd = 6, m = 6, group = 2, k = 3;
  const auto xv = iota_values(c * h * wd, 0.37f);
  const auto wv = iota_values(m * (c / group) * k * k, 0.11f);
  int64_t oh = 0;
  const auto want = naive_conv(xv, wv, c, h, wd, m, group, k, 2, 1, &oh);
  Tensor out;
  ASSERT_TRUE(
      run_op("Conv", 17,
             {{"group", int_attr(group)}, {"strides", ints_attr({2, 2})}, {"pads", ints_attr({1, 1, 1, 1})}},
             {make<float>({1, c, h, wd}, xv), make<float>({m, c / group, k, k}, wv)}, &out)
          .ok());
  ASSERT_EQ(out.shape(), (std::vector<int64_t>{1, m, oh, 3}));
  const auto got = values<float>(out);
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4) << i;
}

TEST(Conv, PointwiseWithBiasAndBatch) {
  // 1x1 conv: y[n, m, p] = sum_c w[m, c] x[n, c, p] + b[m] (goes straight to GEMM).
  const auto xv = iota_values(2 * 3 * 4, 0.5f);
  const std::vector<float> wv = {1, 2, 3, -1, 0, 1};
  Tensor out;
  ASSERT_TRUE(
      run_op("Conv", 11, {},
             {make<float>({2, 3, 2, 2}, xv), make<float>({2, 3, 1, 1}, wv), make<float>({2}, {10, 20})}, &out)
          .ok());
  const auto got = values<float>(out);
  for (int n = 0; n < 2; ++n) {
    for (int mo = 0; mo < 2; ++mo) {
      for (int p = 0; p < 4; ++p) {
        float s = mo == 0 ? 10.f : 20.f;
        for (int ci = 0; ci < 3; ++ci) s += wv[mo * 3 + ci] * xv[(n * 3 + ci) * 4 + p];
        EXPECT_NEAR(got[(n * 2 + mo) * 4 + p], s, 1e-5);
      }
    }
  }
}

TEST(Conv, Float16ComputesInFloat) {
  Tensor out;
  const Tensor x = make<float>({1, 1, 3}, {1, 2, 3}).to(DType::kFloat16);
  const Tensor w = make<float>({1, 1, 2}, {0.5f, 0.25f}).to(DType::kFloat16);
  ASSERT_TRUE(run_op("Conv", 17, {}, {x, w}, &out).ok());
  ASSERT_EQ(out.dtype(), DType::kFloat16);
  const auto got = values<float16>(out);
  EXPECT_FLOAT_EQ(static_cast<float>(got[0]), 1.0f);
  EXPECT_FLOAT_EQ(static_cast<float>(got[1]), 1.75f);
}

TEST(Conv, BadAttributesAreInvalidArguments) {
  const std::vector<Tensor> in = {make<float>({1, 4, 5, 5}, std::vector<float>(100, 1.f)),
                                  make<float>({2, 4, 3, 3}, std::vector<float>(72, 1.f))};
  Tensor out;
  EXPECT_EQ(run_op("Conv", 17, {{"pads", ints_attr({1, 1})}}, in, &out).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(run_op("Conv", 17, {{"group", int_attr(3)}}, in, &out).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(run_op("Conv", 17, {{"auto_pad", string_attr("SAME")}}, in, &out).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(run_op("Conv", 17, {{"strides", ints_attr({0, 1})}}, in, &out).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(run_op("Conv", 17, {{"kernel_shape", ints_attr({2, 2})}}, in, &out).code(),
            StatusCode::kInvalidArgument);
  const std::vector<Tensor> tiny = {make<float>({1, 4, 2, 2}, std::vector<float>(16, 1.f)), in[1]};
  EXPECT_EQ(run_op("Conv", 17, {}, tiny, &out).code(), StatusCode::kInvalidArgument);
}

TEST(ConvTranspose, OutputPaddingAndBias) {
  // 1-D, stride 2, kernel 2: each input spreads over two outputs; output_padding adds one.
  Tensor out;
  ASSERT_TRUE(
      run_op("ConvTranspose", 17, {{"strides", ints_attr({2})}, {"output_padding", ints_attr({1})}},
             {make<float>({1, 1, 3}, {1, 2, 3}), make<float>({1, 1, 2}, {1, 10}), make<float>({1}, {100})},
             &out)
          .ok());
  EXPECT_EQ(values<float>(out), (std::vector<float>{101, 110, 102, 120, 103, 130, 100}));
}

TEST(MaxPool, ColumnMajorIndices) {
  // 2x3 plane, kernel 2x2, stride 1: maxima at (1,1) and (1,2).
  std::vector<Tensor> outs;
  ASSERT_TRUE(run_op("MaxPool", 12, {{"kernel_shape", ints_attr({2, 2})}, {"storage_order", int_attr(1)}},
                     {make<float>({1, 1, 2, 3}, {1, 2, 3, 4, 5, 6})}, &outs, 2)
                  .ok());
  EXPECT_EQ(values<float>(outs[0]), (std::vector<float>{5, 6}));
  // Column major: index = h + w * H.
  EXPECT_EQ(values<int64_t>(outs[1]), (std::vector<int64_t>{1 + 1 * 2, 1 + 2 * 2}));
}

TEST(MaxPool, Int8AndMissingKernelShape) {
  Tensor out;
  ASSERT_TRUE(run_op("MaxPool", 12, {{"kernel_shape", ints_attr({2})}},
                     {make<int8_t>({1, 1, 4}, {-5, -7, 3, -128})}, &out)
                  .ok());
  EXPECT_EQ(values<int8_t>(out), (std::vector<int8_t>{-5, 3, 3}));
  EXPECT_EQ(run_op("MaxPool", 12, {}, {make<float>({1, 1, 4}, {1, 2, 3, 4})}, &out).code(),
            StatusCode::kInvalidArgument);
}

TEST(AveragePool, DilationsCountOnlyRealTaps) {
  Tensor out;
  ASSERT_TRUE(
      run_op("AveragePool", 19,
             {{"kernel_shape", ints_attr({2})}, {"dilations", ints_attr({2})}, {"pads", ints_attr({1, 0})}},
             {make<float>({1, 1, 4}, {1, 2, 3, 4})}, &out)
          .ok());
  // Windows start at -1, 0, 1: taps {1}, {0, 2}, {1, 3} -> 2, 2, 3.
  EXPECT_EQ(values<float>(out), (std::vector<float>{2, 2, 3}));
}

TEST(LpPool, Opset1FloatPIsAccepted) {
  std::vector<Tensor> outs;
  ASSERT_TRUE(run_model(R"(
    <ir_version: 3, opset_import: ["" : 1]>
    g (float[1,1,4] x) => (float[1,1,1] y) {
      y = GlobalLpPool <p = 3.0> (x)
    })",
                        "conv_pool_lppool1", {{"x", make<float>({1, 1, 4}, {1, -1, 2, 0})}}, &outs)
                  .ok());
  EXPECT_NEAR(values<float>(outs[0])[0], std::cbrt(10.0f), 1e-5);
}

TEST(GlobalPools, AverageAndMaxOver3d) {
  std::vector<float> xv(2 * 2 * 2 * 2);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<float>(i);
  Tensor avg, mx;
  ASSERT_TRUE(run_op("GlobalAveragePool", 1, {}, {make<float>({1, 2, 2, 2, 2}, xv)}, &avg).ok());
  ASSERT_TRUE(run_op("GlobalMaxPool", 1, {}, {make<float>({1, 2, 2, 2, 2}, xv)}, &mx).ok());
  EXPECT_EQ(avg.shape(), (std::vector<int64_t>{1, 2, 1, 1, 1}));
  EXPECT_EQ(values<float>(avg), (std::vector<float>{3.5f, 11.5f}));
  EXPECT_EQ(values<float>(mx), (std::vector<float>{7, 15}));
}

TEST(ConvInteger, PerChannelWeightZeroPoint) {
  Tensor out;
  ASSERT_TRUE(run_op("ConvInteger", 10, {},
                     {make<uint8_t>({1, 1, 1, 2}, {10, 20}), make<int8_t>({2, 1, 1, 1}, {3, -2}),
                      make<uint8_t>({}, {10}), make<int8_t>({2}, {1, 0})},
                     &out)
                  .ok());
  EXPECT_EQ(values<int32_t>(out), (std::vector<int32_t>{0, 20, 0, -20}));
}

TEST(QLinearConv, PerChannelScaleBiasAndRoundHalfToEven) {
  Tensor out;
  ASSERT_TRUE(
      run_op("QLinearConv", 10, {},
             {make<uint8_t>({1, 1, 1, 2}, {10, 20}), make<float>({}, {0.5f}), make<uint8_t>({}, {10}),
              make<int8_t>({2, 1, 1, 1}, {3, -2}), make<float>({2}, {1.f, 0.25f}), make<int8_t>({2}, {1, 0}),
              make<float>({}, {1.f}), make<uint8_t>({}, {128}), make<int32_t>({2}, {1, 0})},
             &out)
          .ok());
  // Channel 0: (0+1, 20+1) * 0.5 = 0.5, 10.5 -> 0, 10; channel 1: (0, -20) * 0.125 -> 0, -2.
  EXPECT_EQ(values<uint8_t>(out), (std::vector<uint8_t>{128, 138, 128, 126}));
}

}  // namespace
}  // namespace kiln
