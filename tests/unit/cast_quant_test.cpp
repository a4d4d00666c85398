// Cast / CastLike / QuantizeLinear / DequantizeLinear behaviour the ONNX conformance tests do
// not pin down: rounding and saturation corners, attribute validation, dtype selection.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>

#include "op_test_util.h"

namespace kiln {
namespace {

using namespace testing;  // op_test_util.h

constexpr int kOnnxFloat = 1, kOnnxUInt8 = 2, kOnnxInt8 = 3, kOnnxInt16 = 5, kOnnxInt32 = 6, kOnnxString = 8,
              kOnnxBool = 9, kOnnxFloat16 = 10, kOnnxFloat8E4M3FN = 17, kOnnxFloat8E5M2 = 19, kOnnxInt4 = 22;

TEST(Cast, FloatToIntTruncatesTowardZeroAndSaturates) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor out;
  ASSERT_TRUE(run_op("Cast", 13, {{"to", int_attr(kOnnxInt8)}},
                     {make<float>({7}, {-2.7f, -0.5f, 0.5f, 2.7f, 1000.f, -1000.f, nan})}, &out)
                  .ok());
  EXPECT_EQ(values<int8_t>(out), (std::vector<int8_t>{-2, 0, 0, 2, 127, -128, 0}));
}

TEST(Cast, BoolConversions) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor out;
  ASSERT_TRUE(run_op("Cast", 13, {{"to", int_attr(kOnnxBool)}}, {make<float>({4}, {0.f, -0.f, 0.25f, nan})}, &out).ok());
  EXPECT_EQ(values<bool>(out), (std::vector<bool>{false, false, true, true}));
  ASSERT_TRUE(run_op("Cast", 13, {{"to", int_attr(kOnnxFloat)}}, {make<bool>({2}, {true, false})}, &out).ok());
  EXPECT_EQ(values<float>(out), (std::vector<float>{1.f, 0.f}));
  ASSERT_TRUE(run_op("Cast", 13, {{"to", int_attr(kOnnxBool)}}, {make<int64_t>({2}, {256, 0})}, &out).ok());
  EXPECT_EQ(values<bool>(out), (std::vector<bool>{true, false}));
}

TEST(Cast, DoubleToFloat16RoundsOnce) {
  // 1 + 2^-11 + 2^-40 lies just above the midpoint between 1 and the next fp16; through float
  // it would first become the exact midpoint and then round (to even) down to 1.
  const double v = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  Tensor out;
  ASSERT_TRUE(run_op("Cast", 13, {{"to", int_attr(kOnnxFloat16)}}, {make<double>({1}, {v})}, &out).ok());
  EXPECT_EQ(static_cast<float>(values<float16>(out)[0]), 1.0f + std::ldexp(1.0f, -10));
}

TEST(Cast, Float8SaturateAttribute) {
  const float inf = std::numeric_limits<float>::infinity();
  const Tensor x = make<float>({3}, {1000.f, -inf, 1.f});
  Tensor out;
  ASSERT_TRUE(run_op("Cast", 19, {{"to", int_attr(kOnnxFloat8E4M3FN)}}, {x}, &out).ok());
  std::vector<float8e4m3fn> y = values<float8e4m3fn>(out);
  EXPECT_EQ(static_cast<float>(y[0]), 448.f);
  EXPECT_EQ(static_cast<float>(y[1]), -448.f);
  EXPECT_EQ(static_cast<float>(y[2]), 1.f);
  ASSERT_TRUE(run_op("Cast", 19, {{"to", int_attr(kOnnxFloat8E4M3FN)}, {"saturate", int_attr(0)}}, {x}, &out).ok());
  y = values<float8e4m3fn>(out);
  EXPECT_TRUE(std::isnan(static_cast<float>(y[0])));  // e4m3fn has no infinity
  EXPECT_TRUE(std::isnan(static_cast<float>(y[1])));
  ASSERT_TRUE(run_op("Cast", 19, {{"to", int_attr(kOnnxFloat8E5M2)}, {"saturate", int_attr(0)}}, {x}, &out).ok());
  EXPECT_EQ(static_cast<float>(values<float8e5m2>(out)[1]), -inf);
}

TEST(Cast, UnsupportedTargetsAndBadAttributes) {
  const Tensor x = make<float>({1}, {1.f});
  Tensor out;
  EXPECT_EQ(run_op("Cast", 13, {{"to", int_attr(kOnnxString)}}, {x}, &out).code(), StatusCode::kUnsupported);
  EXPECT_EQ(run_op("Cast", 21, {{"to", int_attr(kOnnxInt4)}}, {x}, &out).code(), StatusCode::kUnsupported);
  EXPECT_EQ(run_op("Cast", 13, {}, {x}, &out).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(run_op("Cast", 19, {{"to", int_attr(kOnnxFloat)}, {"saturate", int_attr(2)}}, {x}, &out).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(run_op("Cast", 25, {{"to", int_attr(kOnnxFloat)}, {"round_mode", string_attr("sideways")}}, {x}, &out)
                .code(),
            StatusCode::kInvalidArgument);
  // round_mode only affects float8e8m0, so every valid value gives the same result here.
  EXPECT_TRUE(run_op("Cast", 25, {{"to", int_attr(kOnnxFloat16)}, {"round_mode", string_attr("down")}}, {x}, &out)
                  .ok());
}

TEST(CastLike, TakesTheTargetsType) {
  Tensor out;
  ASSERT_TRUE(run_op("CastLike", 15, {}, {make<float>({2}, {1.9f, -1.9f}), make<int32_t>({0}, {})}, &out).ok());
  EXPECT_EQ(values<int32_t>(out), (std::vector<int32_t>{1, -1}));
}

TEST(QuantizeLinear, RoundsHalfToEvenAndSaturates) {
  const Tensor x = make<float>({6}, {0.5f, 1.5f, 2.5f, -0.5f, 300.f, -300.f});
  Tensor out;
  ASSERT_TRUE(run_op("QuantizeLinear", 13, {}, {x, make<float>({}, {1.f}), make<int8_t>({}, {0})}, &out).ok());
  EXPECT_EQ(values<int8_t>(out), (std::vector<int8_t>{0, 2, 2, 0, 127, -128}));
  // Without a zero point the output is uint8.
  ASSERT_TRUE(run_op("QuantizeLinear", 13, {}, {x, make<float>({}, {0.5f})}, &out).ok());
  EXPECT_EQ(values<uint8_t>(out), (std::vector<uint8_t>{1, 3, 5, 0, 255, 0}));
}

TEST(QuantizeLinear, OutputDtypeAttribute) {
  const Tensor x = make<float>({2}, {1000.f, -1000.f});
  Tensor out;
  ASSERT_TRUE(run_op("QuantizeLinear", 21, {{"output_dtype", int_attr(kOnnxInt16)}}, {x, make<float>({}, {0.5f})}, &out)
                  .ok());
  EXPECT_EQ(values<int16_t>(out), (std::vector<int16_t>{2000, -2000}));
  // output_dtype must agree with the zero point's type.
  EXPECT_EQ(run_op("QuantizeLinear", 21, {{"output_dtype", int_attr(kOnnxInt16)}},
                   {x, make<float>({}, {1.f}), make<uint8_t>({}, {0})}, &out)
                .code(),
            StatusCode::kInvalidArgument);
}

TEST(QuantizeLinear, PerAxisAndNegativeAxis) {
  const Tensor x = make<float>({2, 3}, {1.f, 2.f, 3.f, 4.f, 5.f, 6.f});
  Tensor out;
  ASSERT_TRUE(run_op("QuantizeLinear", 13, {{"axis", int_attr(0)}},
                     {x, make<float>({2}, {1.f, 2.f}), make<uint8_t>({2}, {0, 10})}, &out)
                  .ok());
  EXPECT_EQ(values<uint8_t>(out), (std::vector<uint8_t>{1, 2, 3, 12, 12, 13}));
  ASSERT_TRUE(run_op("QuantizeLinear", 13, {{"axis", int_attr(-1)}}, {x, make<float>({3}, {1.f, 2.f, 4.f})}, &out).ok());
  EXPECT_EQ(values<uint8_t>(out), (std::vector<uint8_t>{1, 1, 1, 4, 2, 2}));
  // The scale must match the axis' length.
  EXPECT_EQ(run_op("QuantizeLinear", 13, {{"axis", int_attr(1)}}, {x, make<float>({2}, {1.f, 2.f})}, &out).code(),
            StatusCode::kInvalidArgument);
}

TEST(QuantizeLinear, BlockedWithPartialLastBlock) {
  // Axis 1 has 5 elements in blocks of 2: scale dim ceil(5/2) = 3.
  const Tensor x = make<float>({1, 5}, {2.f, 4.f, 6.f, 8.f, 10.f});
  Tensor out;
  ASSERT_TRUE(run_op("QuantizeLinear", 21, {{"axis", int_attr(1)}, {"block_size", int_attr(2)}},
                     {x, make<float>({1, 3}, {1.f, 2.f, 10.f})}, &out)
                  .ok());
  EXPECT_EQ(values<uint8_t>(out), (std::vector<uint8_t>{2, 4, 3, 4, 1}));
  EXPECT_EQ(run_op("QuantizeLinear", 21, {{"axis", int_attr(1)}, {"block_size", int_attr(2)}},
                   {x, make<float>({1, 2}, {1.f, 2.f})}, &out)
                .code(),
            StatusCode::kInvalidArgument);
}

TEST(QuantizeLinear, Float8NoSaturateOverflowsToNaN) {
  const Tensor x = make<float>({2}, {1e6f, 2.f});
  Tensor out;
  ASSERT_TRUE(run_op("QuantizeLinear", 19, {{"saturate", int_attr(0)}},
                     {x, make<float>({}, {1.f}), make<float8e4m3fn>({}, {float8e4m3fn(0.f)})}, &out)
                  .ok());
  const auto y = values<float8e4m3fn>(out);
  EXPECT_TRUE(std::isnan(static_cast<float>(y[0])));
  EXPECT_EQ(static_cast<float>(y[1]), 2.f);
}

TEST(QuantizeLinear, HalfScaleDividesInHalfPrecision) {
  // 1/3 in fp16 is 0.33325..; 1000 / that = 3000.73, which fp16 (spacing 2 there) rounds to
  // 3000, whereas float division would quantize to 3001. The spec makes the scale's type the
  // division's precision.
  const Tensor x = make<float16>({1}, {float16(1000.f)});
  Tensor out;
  ASSERT_TRUE(run_op("QuantizeLinear", 21, {{"output_dtype", int_attr(kOnnxInt16)}},
                     {x, make<float16>({}, {float16(1.f / 3.f)})}, &out)
                  .ok());
  const double expect = std::nearbyint(static_cast<float>(float16(1000.f / static_cast<float>(float16(1.f / 3.f)))));
  EXPECT_EQ(values<int16_t>(out)[0], static_cast<int16_t>(expect));
}

TEST(DequantizeLinear, Int32AndPerAxis) {
  Tensor out;
  ASSERT_TRUE(run_op("DequantizeLinear", 13, {}, {make<int32_t>({3}, {-5, 0, 100}), make<float>({}, {0.5f})}, &out)
                  .ok());
  EXPECT_EQ(values<float>(out), (std::vector<float>{-2.5f, 0.f, 50.f}));
  ASSERT_TRUE(run_op("DequantizeLinear", 13, {{"axis", int_attr(0)}},
                     {make<uint8_t>({2, 2}, {10, 20, 10, 20}), make<float>({2}, {1.f, 0.5f}),
                      make<uint8_t>({2}, {10, 0})},
                     &out)
                  .ok());
  EXPECT_EQ(values<float>(out), (std::vector<float>{0.f, 10.f, 5.f, 10.f}));
}

TEST(DequantizeLinear, OutputDtypeAndTypeChecks) {
  const Tensor x = make<int8_t>({2}, {-4, 6});
  Tensor out;
  ASSERT_TRUE(run_op("DequantizeLinear", 23, {{"output_dtype", int_attr(kOnnxFloat16)}}, {x, make<float>({}, {0.5f})},
                     &out)
                  .ok());
  EXPECT_EQ(static_cast<float>(values<float16>(out)[1]), 3.f);
  // The zero point must have x's type.
  EXPECT_EQ(run_op("DequantizeLinear", 13, {}, {x, make<float>({}, {1.f}), make<uint8_t>({}, {0})}, &out).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(run_op("DequantizeLinear", 23, {{"output_dtype", int_attr(kOnnxInt32)}}, {x, make<float>({}, {1.f})}, &out)
                .code(),
            StatusCode::kUnsupported);
}

}  // namespace
}  // namespace kiln
