// Index-family behaviour the ONNX conformance tests do not pin down: index validation
// errors, scatter reductions, GatherND batch dims, TopK before opset 10 and its tie order,
// ArgMin's select_last_index, OneHot's out-of-range indices, CumSum options.
#include <gtest/gtest.h>

#include "op_test_util.h"

namespace kiln {
namespace {

using namespace testing;  // op_test_util.h

TEST(Gather, ReportsAnOutOfRangeIndexByValue) {
  Tensor out;
  Status s = run_op("Gather", 13, {}, {make<float>({3}, {1, 2, 3}), make<int64_t>({2}, {0, 7})}, &out);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find('7'), std::string::npos) << s.message();
  s = run_op("Gather", 13, {}, {make<float>({3}, {1, 2, 3}), make<int64_t>({1}, {-4})}, &out);
  EXPECT_NE(s.message().find("-4"), std::string::npos) << s.message();
}

TEST(Gather, Axis1WithInt32NegativeIndicesOnBool) {
  Tensor out;
  ASSERT_TRUE(
      run_op("Gather", 13, {{"axis", int_attr(1)}},
             {make<bool>({2, 3}, {true, false, false, false, true, true}), make<int32_t>({2}, {-1, 0})}, &out)
          .ok());
  EXPECT_EQ(out.shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(values<bool>(out), (std::vector<bool>{false, true, true, false}));
}

TEST(GatherElements, NegativeAndOutOfRangeIndices) {
  Tensor out;
  const Tensor data = make<int64_t>({2, 2}, {1, 2, 3, 4});
  ASSERT_TRUE(
      run_op("GatherElements", 13, {{"axis", int_attr(1)}}, {data, make<int64_t>({2, 1}, {-1, 0})}, &out)
          .ok());
  EXPECT_EQ(values<int64_t>(out), (std::vector<int64_t>{2, 3}));
  EXPECT_FALSE(run_op("GatherElements", 13, {}, {data, make<int64_t>({1, 2}, {0, 2})}, &out).ok());
}

TEST(GatherND, BatchDims) {
  Tensor out;
  // data [2,2,2], indices [2,1] with batch_dims=1: out[b] = data[b, idx[b]].
  ASSERT_TRUE(run_op("GatherND", 13, {{"batch_dims", int_attr(1)}},
                     {make<float>({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7}), make<int64_t>({2, 1}, {1, 0})}, &out)
                  .ok());
  EXPECT_EQ(out.shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(values<float>(out), (std::vector<float>{2, 3, 4, 5}));
}

TEST(ScatterND, Reductions) {
  const Tensor data = make<float>({4}, {1, 2, 3, 4});
  const Tensor idx = make<int64_t>({3, 1}, {0, 0, 3});
  const Tensor up = make<float>({3}, {5, -1, 0});
  Tensor out;
  ASSERT_TRUE(run_op("ScatterND", 18, {{"reduction", string_attr("add")}}, {data, idx, up}, &out).ok());
  EXPECT_EQ(values<float>(out), (std::vector<float>{5, 2, 3, 4}));
  ASSERT_TRUE(run_op("ScatterND", 18, {{"reduction", string_attr("max")}}, {data, idx, up}, &out).ok());
  EXPECT_EQ(values<float>(out), (std::vector<float>{5, 2, 3, 4}));
  ASSERT_TRUE(run_op("ScatterND", 18, {{"reduction", string_attr("min")}}, {data, idx, up}, &out).ok());
  EXPECT_EQ(values<float>(out), (std::vector<float>{-1, 2, 3, 0}));
  ASSERT_TRUE(run_op("ScatterND", 18, {{"reduction", string_attr("mul")}}, {data, idx, up}, &out).ok());
  EXPECT_EQ(values<float>(out), (std::vector<float>{-5, 2, 3, 0}));
  EXPECT_EQ(run_op("ScatterND", 18, {{"reduction", string_attr("avg")}}, {data, idx, up}, &out).code(),
            StatusCode::kUnsupported);
  EXPECT_FALSE(
      run_op("ScatterND", 18, {}, {data, make<int64_t>({1, 1}, {4}), make<float>({1}, {0})}, &out).ok());
}

TEST(ScatterElements, MulReductionWithNegativeIndexOnAxis1) {
  Tensor out;
  ASSERT_TRUE(run_op("ScatterElements", 18, {{"axis", int_attr(1)}, {"reduction", string_attr("mul")}},
                     {make<int32_t>({2, 2}, {1, 2, 3, 4}), make<int64_t>({2, 2}, {-1, -1, 0, 0}),
                      make<int32_t>({2, 2}, {5, 6, 7, 8})},
                     &out)
                  .ok());
  EXPECT_EQ(values<int32_t>(out), (std::vector<int32_t>{1, 60, 168, 4}));
}

TEST(TopK, Opset1TakesKAsAnAttribute) {
  std::vector<Tensor> outs;
  const Status s = testing::run_model(R"(
    <ir_version: 3, opset_import: ["" : 1]>
    g (float[2, 3] x) => (float[2, 2] v, int64[2, 2] i) { v, i = TopK <k = 2> (x) }
  )",
                                      "topk_opset1", {{"x", make<float>({2, 3}, {1, 3, 2, 6, 5, 4})}}, &outs);
  ASSERT_TRUE(s.ok()) << s.to_string();
  EXPECT_EQ(values<float>(outs[0]), (std::vector<float>{3, 2, 6, 5}));
  EXPECT_EQ(values<int64_t>(outs[1]), (std::vector<int64_t>{1, 2, 0, 1}));
}

TEST(TopK, SmallestKeepsLowerIndexFirstOnTies) {
  std::vector<Tensor> outs;
  ASSERT_TRUE(run_op("TopK", 11, {{"largest", int_attr(0)}},
                     {make<int32_t>({5}, {2, 1, 2, 1, 0}), make<int64_t>({1}, {4})}, &outs, 2)
                  .ok());
  EXPECT_EQ(values<int32_t>(outs[0]), (std::vector<int32_t>{0, 1, 1, 2}));
  EXPECT_EQ(values<int64_t>(outs[1]), (std::vector<int64_t>{4, 1, 3, 0}));
}

TEST(TopK, RejectsKLargerThanTheAxis) {
  std::vector<Tensor> outs;
  EXPECT_FALSE(run_op("TopK", 11, {}, {make<float>({2}, {1, 2}), make<int64_t>({1}, {3})}, &outs, 2).ok());
}

TEST(ArgMin, SelectLastIndexAndNoKeepdims) {
  Tensor out;
  const Tensor x = make<int8_t>({2, 3}, {1, 0, 0, 5, 5, 5});
  ASSERT_TRUE(run_op("ArgMin", 13, {{"axis", int_attr(1)}, {"keepdims", int_attr(0)}}, {x}, &out).ok());
  EXPECT_EQ(out.shape(), (std::vector<int64_t>{2}));
  EXPECT_EQ(values<int64_t>(out), (std::vector<int64_t>{1, 0}));
  ASSERT_TRUE(
      run_op("ArgMin", 13, {{"axis", int_attr(1)}, {"select_last_index", int_attr(1)}}, {x}, &out).ok());
  EXPECT_EQ(out.shape(), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(values<int64_t>(out), (std::vector<int64_t>{2, 2}));
}

TEST(NonZero, CoordinatesInRowMajorOrder) {
  Tensor out;
  ASSERT_TRUE(run_op("NonZero", 13, {}, {make<float>({2, 2}, {0, 1, 2, 0})}, &out).ok());
  EXPECT_EQ(out.shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(values<int64_t>(out), (std::vector<int64_t>{0, 1, 1, 0}));
}

TEST(OneHot, AxisZeroNegativeAndOutOfRangeIndices) {
  Tensor out;
  ASSERT_TRUE(run_op("OneHot", 11, {{"axis", int_attr(0)}},
                     {make<float>({3}, {-1, 0, 7}), make<int64_t>({}, {3}), make<int32_t>({2}, {0, 9})}, &out)
                  .ok());
  EXPECT_EQ(out.shape(), (std::vector<int64_t>{3, 3}));
  // Column j is index j's one-hot vector; index 7 is out of range and stays all "off".
  EXPECT_EQ(values<int32_t>(out), (std::vector<int32_t>{0, 9, 0, 0, 0, 0, 9, 0, 0}));
}

TEST(CumSum, ExclusiveReverseOnAxis1) {
  Tensor out;
  ASSERT_TRUE(run_op("CumSum", 14, {{"exclusive", int_attr(1)}, {"reverse", int_attr(1)}},
                     {make<int64_t>({2, 3}, {1, 2, 3, 4, 5, 6}), make<int32_t>({}, {-1})}, &out)
                  .ok());
  EXPECT_EQ(values<int64_t>(out), (std::vector<int64_t>{5, 3, 0, 11, 6, 0}));
}

}  // namespace
}  // namespace kiln
