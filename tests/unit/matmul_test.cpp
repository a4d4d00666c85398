// Matmul-family behaviour the ONNX conformance tests do not pin down: Softmax's opset-13
// change, integer and fp16 products, Gemm's C broadcasting, MatMulInteger zero points, and
// Einsum forms (implicit output, traces, broadcast ellipsis, several operands).
#include <gtest/gtest.h>

#include <cmath>

#include "op_test_util.h"

namespace kiln {
namespace {

using namespace testing;  // op_test_util.h

std::vector<float> softmax_ref(const std::vector<float>& x) {
  float m = x[0];
  for (float v : x) m = std::max(m, v);
  float s = 0;
  for (float v : x) s += std::exp(v - m);
  std::vector<float> out;
  for (float v : x) out.push_back(std::exp(v - m) / s);
  return out;
}

void expect_near(const std::vector<float>& a, const std::vector<float>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-5) << i;
}

TEST(Softmax, BeforeOpset13FlattensFromAxisOne) {
  const std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8};
  Tensor out;
  ASSERT_TRUE(run_op("Softmax", 11, {}, {make<float>({2, 2, 2}, x)}, &out).ok());
  auto first = softmax_ref({1, 2, 3, 4}), second = softmax_ref({5, 6, 7, 8});
  first.insert(first.end(), second.begin(), second.end());
  expect_near(values<float>(out), first);
}

TEST(Softmax, FromOpset13UsesTheLastAxisOnly) {
  Tensor out;
  ASSERT_TRUE(run_op("Softmax", 13, {}, {make<float>({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8})}, &out).ok());
  std::vector<float> want;
  for (int i = 0; i < 4; ++i) {
    const auto p = softmax_ref({0, 1});
    want.insert(want.end(), p.begin(), p.end());
  }
  expect_near(values<float>(out), want);
}

TEST(Softmax, Opset11AxisZeroCoversTheWholeTensor) {
  Tensor out;
  ASSERT_TRUE(
      run_op("LogSoftmax", 11, {{"axis", int_attr(0)}}, {make<float>({2, 2}, {1, 2, 3, 4})}, &out).ok());
  const auto p = softmax_ref({1, 2, 3, 4});
  std::vector<float> want;
  for (float v : p) want.push_back(std::log(v));
  expect_near(values<float>(out), want);
}

TEST(Softmax, HardmaxPicksTheFirstOfEqualMaxima) {
  Tensor out;
  ASSERT_TRUE(run_op("Hardmax", 13, {}, {make<float>({2, 3}, {3, 1, 3, 0, 5, 5})}, &out).ok());
  EXPECT_EQ(values<float>(out), (std::vector<float>{1, 0, 0, 0, 1, 0}));
}

TEST(Softmax, RejectsAnOutOfRangeAxis) {
  Tensor out;
  Status s = run_op("Softmax", 13, {{"axis", int_attr(2)}}, {make<float>({2, 2}, {1, 2, 3, 4})}, &out);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
}

TEST(Softmax, Float16ComputesInFloat) {
  Tensor out;
  const Tensor x = make<float>({3}, {1, 2, 3}).to(DType::kFloat16);
  ASSERT_TRUE(run_op("Softmax", 13, {}, {x}, &out).ok());
  const auto got = values<float16>(out);
  const auto want = softmax_ref({1, 2, 3});
  for (size_t i = 0; i < 3; ++i) EXPECT_NEAR(static_cast<float>(got[i]), want[i], 1e-3);
}

TEST(Gemm, IntegerWithAlphaBetaAndColumnBias) {
  // A [2,3], B^T given as [2,3], C [2,1] broadcast along columns.
  Tensor out;
  ASSERT_TRUE(run_op("Gemm", 13, {{"transB", int_attr(1)}, {"alpha", float_attr(2)}, {"beta", float_attr(3)}},
                     {make<int32_t>({2, 3}, {1, 2, 3, 4, 5, 6}), make<int32_t>({2, 3}, {1, 0, 0, 0, 1, 1}),
                      make<int32_t>({2, 1}, {10, 20})},
                     &out)
                  .ok());
  // A*B = [[1, 5], [4, 11]]
  EXPECT_EQ(values<int32_t>(out), (std::vector<int32_t>{2 + 30, 10 + 30, 8 + 60, 22 + 60}));
}

TEST(Gemm, TransposedAAndRowBiasInDouble) {
  Tensor out;
  ASSERT_TRUE(
      run_op("Gemm", 13, {{"transA", int_attr(1)}},
             {make<double>({2, 1}, {1, 2}), make<double>({2, 2}, {1, 2, 3, 4}), make<double>({2}, {1, -1})},
             &out)
          .ok());
  EXPECT_EQ(values<double>(out), (std::vector<double>{1 + 6 + 1, 2 + 8 - 1}));
}

TEST(Gemm, RejectsABiasThatDoesNotBroadcast) {
  Tensor out;
  Status s = run_op(
      "Gemm", 13, {},
      {make<float>({2, 2}, {1, 2, 3, 4}), make<float>({2, 2}, {1, 0, 0, 1}), make<float>({3}, {1, 2, 3})},
      &out);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.to_string();
}

TEST(MatMul, Int64VectorTimesMatrixAndBatchBroadcast) {
  Tensor out;
  ASSERT_TRUE(
      run_op("MatMul", 13, {}, {make<int64_t>({2}, {1, 2}), make<int64_t>({2, 2}, {1, 2, 3, 4})}, &out).ok());
  EXPECT_EQ(out.shape(), (std::vector<int64_t>{2}));
  EXPECT_EQ(values<int64_t>(out), (std::vector<int64_t>{7, 10}));
  // [2,1,1,2] x [3,2,1] -> [2,3,1,1]
  ASSERT_TRUE(run_op("MatMul", 13, {},
                     {make<float>({2, 1, 1, 2}, {1, 2, 3, 4}), make<float>({3, 2, 1}, {1, 0, 0, 1, 1, 1})},
                     &out)
                  .ok());
  EXPECT_EQ(out.shape(), (std::vector<int64_t>{2, 3, 1, 1}));
  EXPECT_EQ(values<float>(out), (std::vector<float>{1, 2, 3, 3, 4, 7}));
}

TEST(MatMul, BFloat16GoesThroughFloat) {
  Tensor out;
  const Tensor a = make<float>({1, 2}, {1.5f, 2}).to(DType::kBFloat16);
  const Tensor b = make<float>({2, 1}, {2, 4}).to(DType::kBFloat16);
  ASSERT_TRUE(run_op("MatMul", 13, {}, {a, b}, &out).ok());
  EXPECT_EQ(static_cast<float>(values<bfloat16>(out)[0]), 11.0f);
}

TEST(MatMul, EmptyInnerDimGivesZeros) {
  Tensor out;
  ASSERT_TRUE(run_op("MatMul", 13, {}, {make<float>({2, 0}, {}), make<float>({0, 3}, {})}, &out).ok());
  EXPECT_EQ(values<float>(out), std::vector<float>(6, 0.0f));
  ASSERT_TRUE(run_op("Gemm", 13, {{"beta", float_attr(2)}},
                     {make<double>({1, 0}, {}), make<double>({0, 2}, {}), make<double>({2}, {1, 2})}, &out)
                  .ok());
  EXPECT_EQ(values<double>(out), (std::vector<double>{2, 4}));
}

TEST(MatMul, ReportsMismatchedInnerDims) {
  Tensor out;
  Status s = run_op("MatMul", 13, {},
                    {make<float>({2, 3}, {1, 2, 3, 4, 5, 6}), make<float>({2, 2}, {1, 2, 3, 4})}, &out);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
}

TEST(MatMulInteger, SubtractsScalarAndPerColumnZeroPoints) {
  Tensor out;
  ASSERT_TRUE(run_op("MatMulInteger", 10, {},
                     {make<uint8_t>({1, 2}, {10, 20}), make<int8_t>({2, 2}, {1, 2, 3, 4}),
                      make<uint8_t>({}, {10}), make<int8_t>({2}, {1, -1})},
                     &out)
                  .ok());
  // A - 10 = [0, 10]; B - [1, -1] per column = [[0, 3], [2, 5]]
  EXPECT_EQ(values<int32_t>(out), (std::vector<int32_t>{20, 50}));
}

TEST(MatMulInteger, PerRowZeroPointForA) {
  Tensor out;
  ASSERT_TRUE(run_op("MatMulInteger", 10, {},
                     {make<int8_t>({2, 1}, {5, 5}), make<int8_t>({1, 1}, {2}), make<int8_t>({2}, {1, 2})},
                     &out)
                  .ok());
  EXPECT_EQ(values<int32_t>(out), (std::vector<int32_t>{8, 6}));
}

Status einsum(const std::string& eq, const std::vector<Tensor>& ins, Tensor* out) {
  return run_op("Einsum", 12, {{"equation", string_attr(eq)}}, ins, out);
}

TEST(Einsum, ImplicitOutputIsSortedSingleLabels) {
  Tensor out;
  const Tensor a = make<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  ASSERT_TRUE(einsum("ba", {a}, &out).ok());  // implicit "ab": a transpose
  EXPECT_EQ(out.shape(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(values<float>(out), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  ASSERT_TRUE(einsum("ij,jk", {a, make<float>({3, 1}, {1, 1, 1})}, &out).ok());
  EXPECT_EQ(values<float>(out), (std::vector<float>{6, 15}));
}

TEST(Einsum, TraceAndDiagonal) {
  Tensor out;
  const Tensor m = make<int32_t>({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  ASSERT_TRUE(einsum("ii", {m}, &out).ok());
  EXPECT_EQ(out.rank(), 0);
  EXPECT_EQ(values<int32_t>(out), (std::vector<int32_t>{15}));
  ASSERT_TRUE(einsum("ii->i", {m}, &out).ok());
  EXPECT_EQ(values<int32_t>(out), (std::vector<int32_t>{1, 5, 9}));
}

TEST(Einsum, BroadcastEllipsisBatchMatmul) {
  Tensor out;
  // [2,1,1,2] x [3,2,1] -> [2,3,1,1], like MatMul.
  ASSERT_TRUE(einsum("...ij,...jk->...ik",
                     {make<float>({2, 1, 1, 2}, {1, 2, 3, 4}), make<float>({3, 2, 1}, {1, 0, 0, 1, 1, 1})}, &out)
                  .ok());
  EXPECT_EQ(out.shape(), (std::vector<int64_t>{2, 3, 1, 1}));
  EXPECT_EQ(values<float>(out), (std::vector<float>{1, 2, 3, 3, 4, 7}));
}

TEST(Einsum, ThreeOperandsAndOuterProduct) {
  Tensor out;
  const Tensor v = make<double>({2}, {1, 2});
  ASSERT_TRUE(einsum("i,j->ij", {v, make<double>({3}, {1, 10, 100})}, &out).ok());
  EXPECT_EQ(values<double>(out), (std::vector<double>{1, 10, 100, 2, 20, 200}));
  const Tensor m = make<double>({2, 2}, {1, 2, 3, 4});
  ASSERT_TRUE(einsum("i,ij,j->", {v, m, v}, &out).ok());
  EXPECT_EQ(values<double>(out), (std::vector<double>{1 * 1 * 1 + 1 * 2 * 2 + 2 * 3 * 1 + 2 * 4 * 2}));
}

TEST(Einsum, UppercaseLabelsSortBeforeLowercase) {
  Tensor out;
  ASSERT_TRUE(einsum("aB", {make<float>({2, 1}, {1, 2})}, &out).ok());
  EXPECT_EQ(out.shape(), (std::vector<int64_t>{1, 2}));
}

TEST(Einsum, RejectsMalformedEquations) {
  Tensor out;
  const Tensor a = make<float>({2, 2}, {1, 2, 3, 4});
  EXPECT_FALSE(einsum("ijk", {a}, &out).ok());
  EXPECT_FALSE(einsum("ij,jk", {a}, &out).ok());
  EXPECT_FALSE(einsum("ij->k", {a}, &out).ok());
  EXPECT_FALSE(einsum("i.j", {a}, &out).ok());
}

}  // namespace
}  // namespace kiln
