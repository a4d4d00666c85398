// Normalization behaviour the conformance tests do not pin down: BatchNormalization across
// opsets (spatial=0, training outputs), LayerNormalization's Mean/InvStdDev outputs and
// broadcast scale, GroupNormalization opset 18 vs 21 scales, LpNormalization, MVN, fp16.
#include <gtest/gtest.h>

#include <cmath>

#include "op_test_util.h"

namespace kiln {
namespace {

using namespace testing;  // op_test_util.h

void expect_near(const std::vector<float>& got, const std::vector<float>& want, float tol = 1e-4f) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "at " << i;
}

TEST(BatchNorm, InferenceUsesRunningStatistics) {
  Tensor x = make<float>({1, 2, 2}, {1, 2, 3, 4});
  Tensor one = make<float>({2}, {1, 2}), zero = make<float>({2}, {0, 1});
  Tensor mean = make<float>({2}, {1, 3}), var = make<float>({2}, {4, 1});
  Tensor y;
  ASSERT_TRUE(
      run_op("BatchNormalization", 15, {{"epsilon", float_attr(0)}}, {x, one, zero, mean, var}, &y).ok());
  expect_near(values<float>(y), {0, 0.5f, 1, 3});
}

TEST(BatchNorm, TrainingModeUpdatesRunningStatistics) {
  Tensor x = make<float>({2, 1, 2}, {0, 2, 4, 6});  // batch mean 3, population variance 5
  Tensor s = make<float>({1}, {1}), b = make<float>({1}, {0});
  Tensor mean = make<float>({1}, {1}), var = make<float>({1}, {1});
  std::vector<Tensor> outs;
  ASSERT_TRUE(run_op("BatchNormalization", 15,
                     {{"epsilon", float_attr(0)}, {"momentum", float_attr(0.5f)}, {"training_mode", int_attr(1)}},
                     {x, s, b, mean, var}, &outs, 3)
                  .ok());
  expect_near(values<float>(outs[0]), {-3 / std::sqrt(5.f), -1 / std::sqrt(5.f), 1 / std::sqrt(5.f),
                                       3 / std::sqrt(5.f)});
  expect_near(values<float>(outs[1]), {2});
  expect_near(values<float>(outs[2]), {3});
}

TEST(BatchNorm, Opset7NonSpatialHasPerActivationParameters) {
  const char* model = R"(
    <ir_version: 3, opset_import: ["" : 7]>
    g (float[1,2,2] x, float[2,2] s, float[2,2] b, float[2,2] m, float[2,2] v) => (float[1,2,2] y) {
      y = BatchNormalization<spatial = 0, epsilon = 0.0>(x, s, b, m, v)
    })";
  std::vector<Tensor> outs;
  ASSERT_TRUE(run_model(model, "bn_nonspatial",
                        {{"x", make<float>({1, 2, 2}, {1, 2, 3, 4})},
                         {"s", make<float>({2, 2}, {1, 1, 1, 2})},
                         {"b", make<float>({2, 2}, {0, 0, 0, 1})},
                         {"m", make<float>({2, 2}, {1, 1, 1, 1})},
                         {"v", make<float>({2, 2}, {1, 1, 1, 4})}},
                        &outs)
                  .ok());
  expect_near(values<float>(outs[0]), {0, 1, 2, 4});
}

TEST(BatchNorm, WrongParameterSizeIsAnError) {
  Tensor x = make<float>({1, 2, 1}, {1, 2});
  Tensor p = make<float>({3}, {1, 1, 1});
  Tensor y;
  EXPECT_EQ(run_op("BatchNormalization", 15, {}, {x, p, p, p, p}, &y).code(), StatusCode::kInvalidArgument);
}

TEST(LayerNorm, OutputsMeanAndInvStdDevInStashType) {
  Tensor x(DType::kFloat16, {2, 2});
  const float xs[] = {1, 3, 2, 2};
  for (int i = 0; i < 4; ++i) x.data_as<float16>()[i] = float16(xs[i]);
  Tensor s(DType::kFloat16, {2}), b(DType::kFloat16, {2});
  for (int i = 0; i < 2; ++i) s.data_as<float16>()[i] = float16(1.f);
  std::vector<Tensor> outs;
  ASSERT_TRUE(run_op("LayerNormalization", 17, {{"epsilon", float_attr(0)}}, {x, s, b}, &outs, 3).ok());
  ASSERT_EQ(outs[0].dtype(), DType::kFloat16);
  EXPECT_EQ(static_cast<float>(outs[0].data_as<float16>()[0]), -1.f);
  EXPECT_EQ(outs[1].dtype(), DType::kFloat32);
  EXPECT_EQ(outs[1].shape(), (std::vector<int64_t>{2, 1}));
  expect_near(values<float>(outs[1]), {2, 2});
  EXPECT_TRUE(std::isinf(values<float>(outs[2])[1]));  // zero variance, zero epsilon
  expect_near({values<float>(outs[2])[0]}, {1});
}

TEST(LayerNorm, ScaleBroadcastsOverTheNormalizedDims) {
  Tensor x = make<float>({1, 2, 2}, {0, 2, 0, 2});
  Tensor y;
  ASSERT_TRUE(run_op("LayerNormalization", 17, {{"axis", int_attr(1)}, {"epsilon", float_attr(0)}},
                     {x, make<float>({2}, {1, 2}), Tensor()}, &y)
                  .ok());
  expect_near(values<float>(y), {-1, 2, -1, 2});
}

TEST(GroupNorm, Opset18ScalesPerGroupOpset21PerChannel) {
  Tensor x = make<float>({1, 4, 1}, {0, 2, 4, 8});
  Tensor y;
  ASSERT_TRUE(run_op("GroupNormalization", 18, {{"num_groups", int_attr(2)}, {"epsilon", float_attr(0)}},
                     {x, make<float>({2}, {1, 2}), make<float>({2}, {0, 10})}, &y)
                  .ok());
  expect_near(values<float>(y), {-1, 1, 8, 12});
  ASSERT_TRUE(run_op("GroupNormalization", 21, {{"num_groups", int_attr(2)}, {"epsilon", float_attr(0)}},
                     {x, make<float>({4}, {1, 2, 3, 4}), make<float>({4}, {0, 0, 0, 1})}, &y)
                  .ok());
  expect_near(values<float>(y), {-1, 2, -3, 5});
  EXPECT_FALSE(run_op("GroupNormalization", 21, {{"num_groups", int_attr(3)}},
                      {x, make<float>({4}, {1, 1, 1, 1}), make<float>({4}, {0, 0, 0, 0})}, &y)
                   .ok());
}

TEST(InstanceNorm, NormalizesEachChannelOfEachSample) {
  Tensor x = make<float>({2, 1, 2}, {1, 3, 10, 30});
  Tensor y;
  ASSERT_TRUE(run_op("InstanceNormalization", 6, {{"epsilon", float_attr(0)}},
                     {x, make<float>({1}, {2}), make<float>({1}, {1})}, &y)
                  .ok());
  expect_near(values<float>(y), {-1, 3, -1, 3});
}

TEST(LpNorm, L1AndL2AlongAnAxis) {
  Tensor x = make<float>({2, 2}, {3, 4, 0, 0});
  Tensor y;
  ASSERT_TRUE(run_op("LpNormalization", 1, {}, {x}, &y).ok());
  expect_near(values<float>(y), {0.6f, 0.8f, 0, 0});  // a zero vector stays zero
  ASSERT_TRUE(run_op("LpNormalization", 1, {{"p", int_attr(1)}, {"axis", int_attr(0)}}, {x}, &y).ok());
  expect_near(values<float>(y), {1, 1, 0, 0});
  EXPECT_EQ(run_op("LpNormalization", 1, {{"p", int_attr(3)}}, {x}, &y).code(), StatusCode::kUnsupported);
}

TEST(MeanVarianceNorm, CustomAxes) {
  Tensor x = make<float>({2, 2}, {1, 3, 5, 5});
  Tensor y;
  ir::Attribute axes;
  axes.kind = ir::Attribute::Kind::kInts;
  axes.ints = {1};
  ASSERT_TRUE(run_op("MeanVarianceNormalization", 13, {{"axes", axes}}, {x}, &y).ok());
  expect_near(values<float>(y), {-1, 1, 0, 0});
}

}  // namespace
}  // namespace kiln
