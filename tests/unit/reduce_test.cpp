// Reduce* behaviour the conformance tests do not pin down: attribute axes of older opsets
// (canonicalized into an input), noop_with_empty_axes, empty reductions, integer and bool
// types, unknown axes during static inference, and errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "op_test_util.h"

namespace kiln {
namespace {

using namespace testing;  // op_test_util.h

TEST(Reduce, AttributeAxesOfOldOpsetsBecomeAnInput) {
  const char* model = R"(
    <ir_version: 7, opset_import: ["" : 11]>
    g (float[2,3] x) => (float[2] y, float[1,3] z) {
      y = ReduceMax<axes = [1], keepdims = 0>(x)
      z = ReduceSum<axes = [-2]>(x)
    })";
  std::vector<Tensor> outs;
  ASSERT_TRUE(run_model(model, "reduce_attr_axes", {{"x", make<float>({2, 3}, {1, 5, 2, -1, -7, 0})}}, &outs).ok());
  EXPECT_EQ(values<float>(outs[0]), (std::vector<float>{5, 0}));
  EXPECT_EQ(outs[1].shape(), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(values<float>(outs[1]), (std::vector<float>{0, -2, 2}));
}

TEST(Reduce, AxesAttributeRejectedWhereAxesIsAnInput) {
  const char* model = R"(
    <ir_version: 8, opset_import: ["" : 18]>
    g (float[2,3] x) => (float[2,1] y) {
      y = ReduceMean<axes = [1]>(x)
    })";
  std::vector<Tensor> outs;
  EXPECT_FALSE(run_model(model, "reduce_attr_axes_18", {{"x", make<float>({2, 3}, {1, 2, 3, 4, 5, 6})}}, &outs).ok());
}

TEST(Reduce, EmptyAxesReduceEverythingUnlessNoop) {
  Tensor x = make<float>({2, 2}, {1, 2, 3, 4});
  Tensor empty = make<int64_t>({0}, {});
  Tensor y;
  ASSERT_TRUE(run_op("ReduceSum", 13, {}, {x, empty}, &y).ok());
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(values<float>(y), (std::vector<float>{10}));
  ASSERT_TRUE(run_op("ReduceSum", 13, {{"noop_with_empty_axes", int_attr(1)}}, {x, empty}, &y).ok());
  EXPECT_EQ(values<float>(y), (std::vector<float>{1, 2, 3, 4}));
}

TEST(Reduce, EmptySetsGiveTheIdentityOfEachReduction) {
  Tensor x(DType::kFloat32, {2, 0, 3});
  Tensor axes = make<int64_t>({1}, {1});
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<std::pair<const char*, float>> cases = {
      {"ReduceSum", 0.f},      {"ReduceProd", 1.f},         {"ReduceMax", -inf},     {"ReduceMin", inf},
      {"ReduceL1", 0.f},       {"ReduceL2", 0.f},           {"ReduceSumSquare", 0.f}, {"ReduceLogSum", -inf},
      {"ReduceLogSumExp", -inf}};
  for (const auto& [op, expected] : cases) {
    Tensor y;
    ASSERT_TRUE(run_op(op, 18, {}, {x, axes}, &y).ok()) << op;
    EXPECT_EQ(y.shape(), (std::vector<int64_t>{2, 1, 3})) << op;
    for (float v : values<float>(y)) EXPECT_EQ(v, expected) << op;
  }
  Tensor y;
  ASSERT_TRUE(run_op("ReduceMean", 18, {}, {x, axes}, &y).ok());
  EXPECT_TRUE(std::isnan(values<float>(y)[0]));
}

TEST(Reduce, IntegerMinMaxOfEmptySetsUseTheTypeLimits) {
  Tensor x(DType::kInt32, {0, 2});
  Tensor axes = make<int64_t>({1}, {0});
  Tensor y;
  ASSERT_TRUE(run_op("ReduceMax", 18, {{"keepdims", int_attr(0)}}, {x, axes}, &y).ok());
  EXPECT_EQ(values<int32_t>(y), (std::vector<int32_t>{INT32_MIN, INT32_MIN}));
  ASSERT_TRUE(run_op("ReduceMin", 18, {{"keepdims", int_attr(0)}}, {x, axes}, &y).ok());
  EXPECT_EQ(values<int32_t>(y), (std::vector<int32_t>{INT32_MAX, INT32_MAX}));
}

TEST(Reduce, Int64SumsExactlyAndBoolMaxMin) {
  const int64_t big = (int64_t{1} << 60) + 1;
  Tensor y;
  ASSERT_TRUE(run_op("ReduceSum", 13, {}, {make<int64_t>({2}, {big, 2})}, &y).ok());
  EXPECT_EQ(values<int64_t>(y), (std::vector<int64_t>{big + 2}));
  Tensor b = make<bool>({2, 2}, {true, false, false, false});
  Tensor axes = make<int64_t>({1}, {1});
  ASSERT_TRUE(run_op("ReduceMax", 20, {{"keepdims", int_attr(0)}}, {b, axes}, &y).ok());
  EXPECT_EQ(values<bool>(y), (std::vector<bool>{true, false}));
  ASSERT_TRUE(run_op("ReduceMin", 20, {{"keepdims", int_attr(0)}}, {b, axes}, &y).ok());
  EXPECT_EQ(values<bool>(y), (std::vector<bool>{false, false}));
}

TEST(Reduce, LogSumExpDoesNotOverflow) {
  Tensor y;
  ASSERT_TRUE(run_op("ReduceLogSumExp", 18, {}, {make<float>({2}, {1000.f, 1000.f})}, &y).ok());
  EXPECT_NEAR(values<float>(y)[0], 1000.f + std::log(2.f), 1e-3);
}

TEST(Reduce, Float16ComputesInWiderPrecision) {
  Tensor x(DType::kFloat16, {4096});
  for (int i = 0; i < 4096; ++i) x.data_as<float16>()[i] = float16(1.0f);
  Tensor y;
  ASSERT_TRUE(run_op("ReduceMean", 18, {}, {x}, &y).ok());
  EXPECT_EQ(static_cast<float>(y.data_as<float16>()[0]), 1.0f);
}

TEST(Reduce, AxisOutOfRangeIsAnError) {
  Tensor y;
  Status s = run_op("ReduceSum", 13, {}, {make<float>({2}, {1, 2}), make<int64_t>({1}, {3})}, &y);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
}

TEST(Reduce, RuntimeAxesKeepRankWithKeepdims) {
  const char* model = R"(
    <ir_version: 8, opset_import: ["" : 18]>
    g (float[2,3] x, int64[1] a) => (float[?,?] y) {
      y = ReduceL2(x, a)
    })";
  std::vector<Tensor> outs;
  ASSERT_TRUE(run_model(model, "reduce_runtime_axes",
                        {{"x", make<float>({2, 3}, {3, 0, 0, 0, 4, 0})}, {"a", make<int64_t>({1}, {0})}}, &outs)
                  .ok());
  EXPECT_EQ(values<float>(outs[0]), (std::vector<float>{3, 4, 0}));
}

}  // namespace
}  // namespace kiln
