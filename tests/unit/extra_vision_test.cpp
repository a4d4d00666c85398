// Vision-op behaviour the conformance tests do not pin down: LRN on fp16/double, EyeLike
// with negative k and a bool dtype, NMS with omitted optional inputs and a zero output limit,
// Compress with a short condition and clear errors.
#include <gtest/gtest.h>

#include <cmath>

#include "op_test_util.h"

namespace kiln {
namespace {

using namespace testing;  // op_test_util.h

TEST(Lrn, DoubleMatchesFormula) {
  Tensor x = make<double>({1, 2, 1, 1}, {1, 2});
  Tensor y;
  ASSERT_TRUE(run_op("LRN", 13, {{"size", int_attr(2)}, {"alpha", float_attr(1)}, {"bias", float_attr(1)}},
                     {x}, &y).ok());
  auto v = values<double>(y);
  // Window for channel 0 is [0, 1]; for channel 1 it is [1, 1].
  EXPECT_NEAR(v[0], 1 / std::pow(1 + 0.5 * 5, 0.75), 1e-6);
  EXPECT_NEAR(v[1], 2 / std::pow(1 + 0.5 * 4, 0.75), 1e-6);
}

TEST(Lrn, MissingSizeIsAnError) {
  Tensor y;
  EXPECT_FALSE(run_op("LRN", 13, {}, {make<float>({1, 1, 1, 1}, {1})}, &y).ok());
}

TEST(EyeLike, NegativeKAndBoolDtype) {
  Tensor y;
  ASSERT_TRUE(run_op("EyeLike", 9, {{"k", int_attr(-1)}, {"dtype", int_attr(9)}},
                     {make<float>({3, 2}, {0, 0, 0, 0, 0, 0})}, &y).ok());
  ASSERT_EQ(y.dtype(), DType::kBool);
  EXPECT_EQ(values<bool>(y), (std::vector<bool>{false, false, true, false, false, true}));
}

TEST(EyeLike, RejectsNon2D) {
  Tensor y;
  EXPECT_FALSE(run_op("EyeLike", 9, {}, {make<float>({3}, {0, 0, 0})}, &y).ok());
}

TEST(Nms, OmittedLimitSelectsNothing) {
  Tensor boxes = make<float>({1, 1, 4}, {0, 0, 1, 1});
  Tensor scores = make<float>({1, 1, 1}, {0.9f});
  Tensor y;
  ASSERT_TRUE(run_op("NonMaxSuppression", 11, {}, {boxes, scores}, &y).ok());
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{0, 3}));
}

TEST(Nms, ScoreThresholdIsStrict) {
  Tensor boxes = make<float>({1, 2, 4}, {0, 0, 1, 1, 0, 2, 1, 3});
  Tensor scores = make<float>({1, 1, 2}, {0.5f, 0.6f});
  Tensor y;
  ASSERT_TRUE(run_op("NonMaxSuppression", 11, {},
                     {boxes, scores, make<int64_t>({1}, {5}), make<float>({1}, {0.5f}), make<float>({1}, {0.5f})},
                     &y).ok());
  EXPECT_EQ(values<int64_t>(y), (std::vector<int64_t>{0, 0, 1}));
}

TEST(Compress, ShortConditionDropsTheRest) {
  Tensor y;
  ASSERT_TRUE(run_op("Compress", 11, {{"axis", int_attr(0)}},
                     {make<int32_t>({3, 1}, {1, 2, 3}), make<bool>({2}, {false, true})}, &y).ok());
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(values<int32_t>(y), (std::vector<int32_t>{2}));
}

TEST(Compress, TooLongConditionIsAnError) {
  Tensor y;
  EXPECT_FALSE(run_op("Compress", 11, {{"axis", int_attr(0)}},
                      {make<int32_t>({1}, {1}), make<bool>({2}, {true, true})}, &y).ok());
}

// Opset 10 had no coordinate_transformation_mode and behaved as output_half_pixel.
TEST(RoiAlign, Opset10DefaultsToOutputHalfPixel) {
  Tensor x = make<float>({1, 1, 2, 2}, {0, 1, 2, 3});
  Tensor rois = make<float>({1, 4}, {0, 0, 1, 1});
  Tensor batch = make<int64_t>({1}, {0});
  Tensor y10, y16, y16_legacy;
  ASSERT_TRUE(run_op("RoiAlign", 10, {}, {x, rois, batch}, &y10).ok());
  ASSERT_TRUE(run_op("RoiAlign", 16, {}, {x, rois, batch}, &y16).ok());
  ASSERT_TRUE(run_op("RoiAlign", 16, {{"coordinate_transformation_mode", string_attr("output_half_pixel")}},
                     {x, rois, batch}, &y16_legacy).ok());
  EXPECT_EQ(values<float>(y10), values<float>(y16_legacy));
  EXPECT_NE(values<float>(y10), values<float>(y16));
}

TEST(RoiAlign, BadModeIsAnError) {
  Tensor y;
  EXPECT_FALSE(run_op("RoiAlign", 16, {{"mode", string_attr("sum")}},
                      {make<float>({1, 1, 2, 2}, {0, 1, 2, 3}), make<float>({1, 4}, {0, 0, 1, 1}),
                       make<int64_t>({1}, {0})},
                      &y).ok());
}

TEST(MaxUnpool, DefaultShapeFromKernelAndStrides) {
  Tensor y;
  ASSERT_TRUE(run_op("MaxUnpool", 11, {{"kernel_shape", ints_attr({2})}, {"strides", ints_attr({2})}},
                     {make<float>({1, 1, 2}, {4, 7}), make<int64_t>({1, 1, 2}, {1, 2})}, &y).ok());
  EXPECT_EQ(values<float>(y), (std::vector<float>{0, 4, 7, 0}));
}

}  // namespace
}  // namespace kiln
