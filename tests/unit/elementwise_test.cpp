// Elementwise ops: behaviour the ONNX conformance tests do not pin down — general
// broadcasting layouts, integer corner cases, NaN handling, old-opset forms, attribute and
// dtype errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>

#include "op_test_util.h"

namespace kiln {
namespace {

using namespace testing;  // op_test_util.h

const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

// Naive broadcasting reference: the input index of each output element.
int64_t broadcast_index(const std::vector<int64_t>& in, const std::vector<int64_t>& out, int64_t flat) {
  int64_t idx = 0, stride = 1;
  for (size_t d = out.size(); d-- > 0;) {
    const int64_t coord = flat % out[d];
    flat /= out[d];
    const size_t off = out.size() - in.size();
    if (d >= off) {
      const int64_t n = in[d - off];
      if (n != 1) idx += coord * stride;
      stride *= n;
    }
  }
  return idx;
}

std::vector<float> iota(int64_t n, float start) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = start + static_cast<float>(i);
  return v;
}

TEST(ElementwiseBroadcast, MatchesNaiveIndexingForMixedLayouts) {
  const std::vector<std::vector<std::vector<int64_t>>> cases = {
      {{2, 3, 1}, {1, 3, 4}}, {{2, 1, 4}, {3, 1}}, {{4}, {2, 3, 4}}, {{2, 3, 4, 5}, {1, 3, 1, 1}},
      {{1, 1, 5}, {2, 3, 1}}, {{3, 1, 1, 2}, {1, 4, 5, 1}}, {{0, 3}, {1, 3}}};
  for (const auto& c : cases) {
    const Tensor a = make<float>(c[0], iota(Tensor::numel_of(c[0]), 1));
    const Tensor b = make<float>(c[1], iota(Tensor::numel_of(c[1]), 100));
    Tensor y;
    ASSERT_TRUE(run_op("Sub", 21, {}, {a, b}, &y).ok());
    for (int64_t i = 0; i < y.numel(); ++i) {
      const float want = a.data_as<float>()[broadcast_index(c[0], y.shape(), i)] -
                         b.data_as<float>()[broadcast_index(c[1], y.shape(), i)];
      ASSERT_EQ(y.data_as<float>()[i], want) << shape_to_string(c[0]) << " - " << shape_to_string(c[1]) << " at " << i;
    }
  }
}

TEST(ElementwiseBroadcast, WhereBroadcastsAllThreeInputs) {
  Tensor y;
  ASSERT_TRUE(
      run_op("Where", 21, {},
             {make<bool>({2, 1}, {true, false}), make<int64_t>({1, 3}, {1, 2, 3}), make<int64_t>({}, {-1})},
             &y)
          .ok());
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values<int64_t>(y), (std::vector<int64_t>{1, 2, 3, -1, -1, -1}));
}

TEST(ElementwiseBroadcast, IncompatibleShapesAreAnError) {
  Tensor y;
  const Status s = run_op("Add", 21, {}, {make<float>({2, 3}, iota(6, 0)), make<float>({2}, {1, 2})}, &y);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.to_string();
}

TEST(ElementwiseBinary, MismatchedDtypesAndUnsupportedDtypesAreErrors) {
  Tensor y;
  EXPECT_EQ(run_op("Add", 21, {}, {make<float>({1}, {1}), make<double>({1}, {1})}, &y).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(run_op("Sum", 21, {}, {make<int32_t>({1}, {1}), make<int32_t>({1}, {1})}, &y).code(),
            StatusCode::kUnsupported);
  EXPECT_EQ(run_op("Sqrt", 21, {}, {make<int32_t>({1}, {4})}, &y).code(), StatusCode::kUnsupported);
  EXPECT_EQ(run_op("Neg", 21, {}, {make<uint8_t>({1}, {4})}, &y).code(), StatusCode::kUnsupported);
}

TEST(ElementwiseBinary, IntegerDivisionTruncatesAndSurvivesZero) {
  Tensor y;
  ASSERT_TRUE(run_op("Div", 21, {},
                     {make<int32_t>({5}, {7, -7, 7, -7, 5}), make<int32_t>({5}, {2, 2, -2, -2, 0})}, &y)
                  .ok());
  EXPECT_EQ(values<int32_t>(y), (std::vector<int32_t>{3, -3, -3, 3, 0}));
  ASSERT_TRUE(run_op("Div", 21, {}, {make<int8_t>({1}, {-128}), make<int8_t>({1}, {-1})}, &y).ok());
  EXPECT_EQ(values<int8_t>(y), (std::vector<int8_t>{-128}));
}

TEST(ElementwiseBinary, IntegerArithmeticWraps) {
  Tensor y;
  ASSERT_TRUE(run_op("Add", 21, {}, {make<int8_t>({1}, {127}), make<int8_t>({1}, {1})}, &y).ok());
  EXPECT_EQ(values<int8_t>(y), (std::vector<int8_t>{-128}));
  ASSERT_TRUE(run_op("Mul", 21, {}, {make<uint16_t>({1}, {65535}), make<uint16_t>({1}, {65535})}, &y).ok());
  EXPECT_EQ(values<uint16_t>(y), (std::vector<uint16_t>{1}));
}

TEST(ElementwiseBinary, ModFollowsDivisorSignUnlessFmod) {
  Tensor y;
  const Tensor a = make<int32_t>({4}, {-4, 7, -3, 5});
  const Tensor b = make<int32_t>({4}, {3, -3, 2, -2});
  ASSERT_TRUE(run_op("Mod", 21, {}, {a, b}, &y).ok());
  EXPECT_EQ(values<int32_t>(y), (std::vector<int32_t>{2, -2, 1, -1}));
  ASSERT_TRUE(run_op("Mod", 21, {{"fmod", int_attr(1)}}, {a, b}, &y).ok());
  EXPECT_EQ(values<int32_t>(y), (std::vector<int32_t>{-1, 1, -1, 1}));
  ASSERT_TRUE(run_op("Mod", 21, {{"fmod", int_attr(1)}},
                     {make<float>({2}, {-4.5f, 4.5f}), make<float>({2}, {2, -2})}, &y)
                  .ok());
  EXPECT_EQ(values<float>(y), (std::vector<float>{-0.5f, 0.5f}));
  EXPECT_EQ(run_op("Mod", 21, {{"fmod", int_attr(2)}}, {a, b}, &y).code(), StatusCode::kInvalidArgument);
}

TEST(ElementwiseBinary, PowIsExactForIntegers) {
  Tensor y;
  ASSERT_TRUE(
      run_op("Pow", 21, {}, {make<int64_t>({4}, {3, 2, -2, 5}), make<int64_t>({4}, {39, 0, 3, -1})}, &y)
          .ok());
  EXPECT_EQ(values<int64_t>(y), (std::vector<int64_t>{4052555153018976267LL, 1, -8, 0}));
  // Mixed types: the output has the base's type; float exponents truncate integer results.
  ASSERT_TRUE(run_op("Pow", 21, {}, {make<int32_t>({2}, {2, 9}), make<float>({2}, {0.5f, 0.5f})}, &y).ok());
  EXPECT_EQ(values<int32_t>(y), (std::vector<int32_t>{1, 3}));
  ASSERT_TRUE(run_op("Pow", 21, {}, {make<float16>({1}, {float16(3.0f)}), make<uint8_t>({1}, {2})}, &y).ok());
  EXPECT_EQ(static_cast<float>(values<float16>(y)[0]), 9.0f);
}

TEST(ElementwiseBinary, BitShiftAndBitwise) {
  Tensor y;
  ASSERT_TRUE(run_op("BitShift", 21, {{"direction", string_attr("LEFT")}},
                     {make<uint8_t>({3}, {1, 3, 255}), make<uint8_t>({3}, {7, 1, 8})}, &y)
                  .ok());
  EXPECT_EQ(values<uint8_t>(y), (std::vector<uint8_t>{128, 6, 0}));
  ASSERT_TRUE(run_op("BitShift", 21, {{"direction", string_attr("RIGHT")}},
                     {make<uint64_t>({1}, {1ull << 63}), make<uint64_t>({1}, {63})}, &y)
                  .ok());
  EXPECT_EQ(values<uint64_t>(y), (std::vector<uint64_t>{1}));
  EXPECT_EQ(run_op("BitShift", 21, {{"direction", string_attr("UP")}},
                   {make<uint8_t>({1}, {1}), make<uint8_t>({1}, {1})}, &y)
                .code(),
            StatusCode::kInvalidArgument);
  ASSERT_TRUE(
      run_op("BitwiseXor", 21, {}, {make<int16_t>({2}, {0x0F0F, -1}), make<int16_t>({1}, {0x00FF})}, &y)
          .ok());
  EXPECT_EQ(values<int16_t>(y), (std::vector<int16_t>{0x0FF0, static_cast<int16_t>(0xFF00)}));
}

TEST(ElementwiseBinary, ComparisonsAndLogicGiveBool) {
  Tensor y;
  ASSERT_TRUE(
      run_op("GreaterOrEqual", 21, {}, {make<uint64_t>({3}, {1, 2, 3}), make<uint64_t>({}, {2})}, &y).ok());
  EXPECT_EQ(values<bool>(y), (std::vector<bool>{false, true, true}));
  ASSERT_TRUE(run_op("Equal", 21, {}, {make<float>({2}, {kNaN, 1}), make<float>({2}, {kNaN, 1})}, &y).ok());
  EXPECT_EQ(values<bool>(y), (std::vector<bool>{false, true}));
  ASSERT_TRUE(
      run_op("Xor", 21, {}, {make<bool>({2, 1}, {true, false}), make<bool>({2}, {true, false})}, &y).ok());
  EXPECT_EQ(values<bool>(y), (std::vector<bool>{false, true, true, false}));
}

TEST(ElementwiseBinary, PReluSlopeBroadcastsOnlyTowardX) {
  Tensor y;
  ASSERT_TRUE(
      run_op("PRelu", 21, {}, {make<float>({2, 2}, {-1, 2, -3, 4}), make<float>({2}, {0.5f, 0.25f})}, &y)
          .ok());
  EXPECT_EQ(values<float>(y), (std::vector<float>{-0.5f, 2, -1.5f, 4}));
  EXPECT_EQ(
      run_op("PRelu", 21, {}, {make<float>({2}, {-1, 2}), make<float>({2, 2}, {1, 1, 1, 1})}, &y).code(),
      StatusCode::kInvalidArgument);
}

TEST(ElementwiseVariadic, MaxMinPropagateNaNAndBroadcast) {
  Tensor y;
  ASSERT_TRUE(run_op("Max", 21, {},
                     {make<float>({3}, {1, kNaN, 3}), make<float>({1}, {2}), make<float>({2, 1}, {0, 5})}, &y)
                  .ok());
  const std::vector<float> v = values<float>(y);
  ASSERT_EQ(y.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(v[0], 2);
  EXPECT_TRUE(std::isnan(v[1]));
  EXPECT_EQ(v[2], 3);
  EXPECT_EQ(v[3], 5);
  EXPECT_TRUE(std::isnan(v[4]));
  ASSERT_TRUE(run_op("Min", 21, {}, {make<uint32_t>({2}, {7, 1}), make<uint32_t>({2}, {3, 9})}, &y).ok());
  EXPECT_EQ(values<uint32_t>(y), (std::vector<uint32_t>{3, 1}));
}

TEST(ElementwiseVariadic, MeanAndSumOfSeveralInputs) {
  Tensor y;
  ASSERT_TRUE(run_op("Mean", 21, {},
                     {make<double>({2}, {1, 2}), make<double>({}, {3}), make<double>({2}, {5, 7})}, &y)
                  .ok());
  EXPECT_EQ(values<double>(y), (std::vector<double>{3, 4}));
  // fp16 accumulates in float: 2048 + 1 + 1 is 2050 exactly, while rounding after each add
  // would stay at 2048.
  ASSERT_TRUE(run_op("Sum", 21, {},
                     {make<float16>({1}, {float16(2048.f)}), make<float16>({1}, {float16(1.f)}),
                      make<float16>({1}, {float16(1.f)})},
                     &y)
                  .ok());
  EXPECT_EQ(static_cast<float>(values<float16>(y)[0]), 2050.f);
}

TEST(ElementwiseUnary, RoundingSignAbsAndPredicates) {
  Tensor y;
  ASSERT_TRUE(run_op("Round", 21, {}, {make<float>({6}, {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 2.4f})}, &y).ok());
  EXPECT_EQ(values<float>(y), (std::vector<float>{0, 2, 2, -0, -2, 2}));
  ASSERT_TRUE(run_op("Sign", 21, {}, {make<int8_t>({3}, {-5, 0, 9})}, &y).ok());
  EXPECT_EQ(values<int8_t>(y), (std::vector<int8_t>{-1, 0, 1}));
  ASSERT_TRUE(run_op("Abs", 21, {}, {make<int16_t>({2}, {-3, 3})}, &y).ok());
  EXPECT_EQ(values<int16_t>(y), (std::vector<int16_t>{3, 3}));
  ASSERT_TRUE(
      run_op("IsInf", 21, {{"detect_positive", int_attr(0)}}, {make<float>({4}, {kInf, -kInf, kNaN, 1})}, &y)
          .ok());
  EXPECT_EQ(values<bool>(y), (std::vector<bool>{false, true, false, false}));
  ASSERT_TRUE(
      run_op("IsNaN", 21, {}, {make<float8e4m3fn>({2}, {float8e4m3fn(kNaN), float8e4m3fn(1.f)})}, &y).ok());
  EXPECT_EQ(values<bool>(y), (std::vector<bool>{true, false}));
  ASSERT_TRUE(run_op("Erf", 21, {}, {make<int32_t>({2}, {0, 3})}, &y).ok());
  EXPECT_EQ(values<int32_t>(y), (std::vector<int32_t>{0, 0}));
}

TEST(ElementwiseUnary, ActivationValues) {
  Tensor y;
  const Tensor x = make<double>({3}, {-1.0, 0.0, 2.0});
  ASSERT_TRUE(run_op("Elu", 21, {}, {x}, &y).ok());
  EXPECT_DOUBLE_EQ(values<double>(y)[0], std::expm1(-1.0));
  ASSERT_TRUE(run_op("Selu", 21, {}, {x}, &y).ok());
  EXPECT_NEAR(values<double>(y)[2], 2.1014020442962646, 1e-6);
  ASSERT_TRUE(run_op("Celu", 21, {}, {x}, &y).ok());
  EXPECT_DOUBLE_EQ(values<double>(y)[0], std::expm1(-1.0));
  ASSERT_TRUE(run_op("ThresholdedRelu", 21, {}, {x}, &y).ok());
  EXPECT_EQ(values<double>(y), (std::vector<double>{0, 0, 2}));
  ASSERT_TRUE(run_op("Shrink", 21, {}, {make<int32_t>({3}, {-5, 0, 5})}, &y).ok());
  EXPECT_EQ(values<int32_t>(y), (std::vector<int32_t>{-5, 0, 5}));
  // Large inputs neither overflow nor lose the linear tail.
  ASSERT_TRUE(run_op("Softplus", 21, {}, {make<float>({2}, {100.f, -100.f})}, &y).ok());
  EXPECT_FLOAT_EQ(values<float>(y)[0], 100.f);
  EXPECT_GT(values<float>(y)[1], 0.f);
  ASSERT_TRUE(run_op("Sigmoid", 21, {}, {make<float>({2}, {-100.f, 100.f})}, &y).ok());
  EXPECT_GE(values<float>(y)[0], 0.f);
  EXPECT_EQ(values<float>(y)[1], 1.f);
  ASSERT_TRUE(run_op("Relu", 21, {}, {make<int64_t>({2}, {-3, 3})}, &y).ok());
  EXPECT_EQ(values<int64_t>(y), (std::vector<int64_t>{0, 3}));
  ASSERT_TRUE(
      run_op("Gelu", 21, {{"approximate", string_attr("tanh")}}, {make<bfloat16>({1}, {bfloat16(1.f)})}, &y)
          .ok());
  EXPECT_NEAR(static_cast<float>(values<bfloat16>(y)[0]), 0.8412f, 4e-3);
}

TEST(ElementwiseUnary, GeluRejectsUnknownApproximation) {
  Tensor y;
  const Status s = run_op("Gelu", 21, {{"approximate", string_attr("fast")}}, {make<float>({1}, {1.f})}, &y);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("fast"), std::string::npos) << s.message();
}

TEST(Clip, IntegerBoundsAndDefaults) {
  Tensor y;
  ASSERT_TRUE(run_op("Clip", 21, {},
                     {make<int64_t>({3}, {-9, 0, 9}), make<int64_t>({}, {-2}), make<int64_t>({}, {2})}, &y)
                  .ok());
  EXPECT_EQ(values<int64_t>(y), (std::vector<int64_t>{-2, 0, 2}));
  ASSERT_TRUE(run_op("Clip", 21, {}, {make<float16>({2}, {float16(kInf), float16(kNaN)})}, &y).ok());
  EXPECT_TRUE(std::isinf(static_cast<float>(values<float16>(y)[0])));
  EXPECT_TRUE(std::isnan(static_cast<float>(values<float16>(y)[1])));
}

TEST(Clip, Opset6AttributesBecomeInputs) {
  Tensor y;
  ASSERT_TRUE(run_model(R"(
    <ir_version: 7, opset_import: ["" : 6]>
    g (float[4] x) => (float[4] y) { y = Clip <min = -1.0, max = 1.5> (x) }
  )",
                        "clip_opset6", {{"x", make<float>({4}, {-3, 0.5f, 2, kNaN})}}, &y)
                  .ok());
  const std::vector<float> v = values<float>(y);
  EXPECT_EQ(v[0], -1);
  EXPECT_EQ(v[1], 0.5f);
  EXPECT_EQ(v[2], 1.5f);
  EXPECT_TRUE(std::isnan(v[3]));
  // Only one bound given: the other stays open.
  ASSERT_TRUE(run_model(R"(
    <ir_version: 7, opset_import: ["" : 6]>
    g (double[2] x) => (double[2] y) { y = Clip <max = 0.0> (x) }
  )",
                        "clip_opset6_max", {{"x", make<double>({2}, {-1e300, 5})}}, &y)
                  .ok());
  EXPECT_EQ(values<double>(y), (std::vector<double>{-1e300, 0}));
}

TEST(Clip, NonScalarBoundIsAnError) {
  Tensor y;
  const Status s = run_op("Clip", 21, {}, {make<float>({2}, {1, 2}), make<float>({2}, {0, 0})}, &y);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.to_string();
}

}  // namespace
}  // namespace kiln
