// RNN / GRU / LSTM against values from an independent numpy transcription of the ONNX
// equations (tests/unit/rnn_reference.py prints them): directions, sequence_lens, layouts,
// clip, input_forget, peepholes, non-default activations, linear_before_reset.
#include <gtest/gtest.h>

#include <map>

#include "op_test_util.h"

namespace kiln {
namespace {

using namespace testing;  // op_test_util.h

void expect_close(const Tensor& t, std::vector<int64_t> shape, const std::vector<float>& want) {
  ASSERT_EQ(t.dtype(), DType::kFloat32);
  ASSERT_EQ(t.shape(), shape);
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(t.data_as<float>()[i], want[i], 2e-5) << "element " << i;
}

TEST(Lstm, BidirectionalWithAllOptionalInputsAndSequenceLengths) {
  const std::vector<float> x = {-0.17f, 0.44f, -1.0f, -0.4f, -0.71f, -0.82f, -0.63f, -0.31f, -0.21f, 0.08f, -0.16f, 0.37f};
  const std::vector<float> w = {-0.13f, -0.95f, 0.1f, -0.13f, -0.16f, -0.34f, -0.59f, 0.24f, -0.4f, -0.47f, 0.24f, 0.06f, -0.73f, 0.03f, -0.63f, 0.57f, 0.71f, -0.01f, 0.69f, -0.84f, 0.01f, -0.87f, -0.14f, -0.81f, -0.75f, 0.19f, -0.55f, -0.79f, -0.56f, -0.3f, -0.06f, -0.6f};
  const std::vector<float> r = {0.1f, 0.42f, -0.42f, 0.02f, 0.79f, 0.79f, -0.75f, -0.59f, -0.9f, -0.12f, -0.94f, -0.09f, 0.3f, -0.44f, 0.35f, 0.18f, -0.95f, 0.12f, -0.48f, -0.17f, -0.43f, 0.39f, -0.12f, -0.69f, 0.09f, 0.56f, -0.39f, -0.56f, -0.22f, 0.87f, 0.95f, 0.34f};
  const std::vector<float> b = {0.93f, 0.09f, 0.95f, 0.43f, 0.4f, -0.57f, 0.95f, -0.99f, -0.49f, -0.13f, 0.56f, -0.6f, 0.73f, 0.97f, -0.67f, 0.19f, -0.98f, -0.23f, -0.91f, 0.91f, -0.13f, 0.9f, 0.57f, 0.73f, -0.65f, -0.85f, 0.2f, -0.66f, 0.47f, -0.18f, 0.06f, 0.88f};
  const std::vector<float> h0 = {-0.56f, 0.74f, -0.59f, 0.84f, -0.02f, 0.22f, 0.53f, 0.04f};
  const std::vector<float> c0 = {0.79f, -0.34f, 0.64f, -0.92f, -0.78f, 0.19f, 0.06f, -0.16f};
  const std::vector<float> p = {-0.85f, 0.56f, -0.12f, 0.45f, 0.96f, 0.08f, 0.0f, -0.86f, -0.46f, -0.0f, 0.36f, 0.61f};
  const std::vector<float> y = {0.4777274f, -0.1957319f, 0.6163166f, -0.30878f, 0.009178498f, 0.1719976f, 0.0573428f, 0.155377f, 0.7074726f, -0.1636107f, 0.7054442f, -0.1693157f, -0.0663971f, 0.3326453f, 0.03162621f, 0.05041958f, 0.7033308f, -0.1075329f, 0.0f, 0.0f, -0.12468f, 0.1509937f, 0.0f, 0.0f};
  const std::vector<float> y_h = {0.7033308f, -0.1075329f, 0.7054442f, -0.1693157f, 0.009178498f, 0.1719976f, 0.0573428f, 0.155377f};
  const std::vector<float> y_c = {1.152856f, -0.313811f, 1.155881f, -0.4346361f, 0.03295607f, 0.42978f, 0.1468478f, 0.2388987f};
  std::vector<Tensor> out;
  ASSERT_TRUE(run_op("LSTM", 14, {{"hidden_size", int_attr(2)}, {"direction", string_attr("bidirectional")}},
                     {make<float>({3, 2, 2}, x), make<float>({2, 8, 2}, w), make<float>({2, 8, 2}, r),
                      make<float>({2, 16}, b), make<int32_t>({2}, {3, 2}), make<float>({2, 2, 2}, h0),
                      make<float>({2, 2, 2}, c0), make<float>({2, 6}, p)},
                     &out, 3)
                  .ok());
  expect_close(out[0], {3, 2, 2, 2}, y);
  expect_close(out[1], {2, 2, 2}, y_h);
  expect_close(out[2], {2, 2, 2}, y_c);
}

TEST(Lstm, ReverseBatchFirstWithClipInputForgetAndCustomActivations) {
  const std::vector<float> x = {-0.64f, -0.96f, -0.07f, 0.45f, -0.16f, -0.03f, -0.97f, -0.03f, 0.88f, 0.7f, 0.46f, -0.78f};
  const std::vector<float> w = {-0.69f, 0.48f, -0.47f, 0.07f, -0.97f, 0.84f, 0.8f, -0.93f, 0.91f, -0.73f, -0.43f, 0.21f, 0.89f, 0.71f, -1.0f, 0.04f};
  const std::vector<float> r = {0.56f, -0.52f, 0.65f, 0.93f, 0.95f, -0.09f, 0.22f, 0.55f, 0.28f, 0.44f, -0.93f, -0.4f, -0.88f, 0.71f, -0.25f, 0.36f};
  const std::vector<float> y = {0.0f, 0.1380673f, 0.04846111f, 0.02074655f, 0.0f, 0.02458262f, 0.0f, 0.03577147f, 0.03934217f, 0.0f, 0.0f, 0.0f};
  const std::vector<float> y_h = {0.0f, 0.1380673f, 0.0f, 0.03577147f};
  const std::vector<float> y_c = {-0.1298321f, 0.2650749f, -0.1988948f, 0.1430859f};
  std::vector<Tensor> out;
  ASSERT_TRUE(run_op("LSTM", 14,
                     {{"hidden_size", int_attr(2)},
                      {"direction", string_attr("reverse")},
                      {"layout", int_attr(1)},
                      {"clip", float_attr(0.5f)},
                      {"input_forget", int_attr(1)},
                      {"activations", strings_attr({"HardSigmoid", "Tanh", "Relu"})},
                      {"activation_alpha", floats_attr({0.3f})},
                      {"activation_beta", floats_attr({0.4f})}},
                     {make<float>({2, 3, 2}, x), make<float>({1, 8, 2}, w), make<float>({1, 8, 2}, r)}, &out,
                     3)
                  .ok());
  expect_close(out[0], {2, 3, 1, 2}, y);
  expect_close(out[1], {2, 1, 2}, y_h);
  expect_close(out[2], {2, 1, 2}, y_c);
}

TEST(Gru, BidirectionalLinearBeforeResetWithSequenceLengths) {
  const std::vector<float> x = {-0.9f, -0.42f, 0.44f, -0.96f, -0.59f, -0.9f, -0.4f, 0.33f, -0.38f, 0.17f, -0.86f, 0.73f};
  const std::vector<float> w = {-0.58f, -0.04f, -0.16f, 0.72f, -0.66f, -0.32f, -0.46f, 0.38f, -0.56f, 0.62f, -0.98f, 0.12f, 0.63f, 0.49f, -0.62f, -0.99f, 0.54f, 0.92f, 0.4f, -0.4f, 0.54f, 0.38f, -0.23f, 0.23f};
  const std::vector<float> r = {0.03f, 0.89f, 0.53f, -0.44f, -0.56f, 0.37f, -0.67f, -0.22f, 0.24f, -0.18f, -1.0f, 0.77f, 0.77f, -0.4f, 0.18f, 0.96f, 0.69f, -0.87f, -0.41f, -0.42f, 0.64f, 0.25f, -0.78f, -1.0f};
  const std::vector<float> b = {0.92f, 0.4f, 1.0f, -0.56f, -0.28f, 0.48f, 0.99f, -0.37f, -0.73f, -0.23f, -0.36f, -0.27f, 0.42f, 0.8f, 0.07f, -0.51f, 0.34f, 0.12f, 0.09f, 0.79f, 0.69f, -0.39f, 0.26f, 0.36f};
  const std::vector<float> y = {-0.02312829f, 0.4454651f, -0.1349375f, -0.08174187f, -0.1022592f, 0.022186f, 0.3299536f, 0.1075044f, 0.0f, 0.0f, -0.1291322f, 0.243548f, 0.0f, 0.0f, 0.2646275f, 0.1335232f, 0.0f, 0.0f, -0.09627093f, 0.4857746f, 0.0f, 0.0f, 0.1378096f, 0.09889155f};
  const std::vector<float> y_h = {-0.02312829f, 0.4454651f, -0.09627093f, 0.4857746f, -0.1022592f, 0.022186f, 0.3299536f, 0.1075044f};
  std::vector<Tensor> out;
  ASSERT_TRUE(run_op("GRU", 14,
                     {{"hidden_size", int_attr(2)},
                      {"direction", string_attr("bidirectional")},
                      {"linear_before_reset", int_attr(1)}},
                     {make<float>({3, 2, 2}, x), make<float>({2, 6, 2}, w), make<float>({2, 6, 2}, r),
                      make<float>({2, 12}, b), make<int32_t>({2}, {1, 3})},
                     &out, 2)
                  .ok());
  expect_close(out[0], {3, 2, 2, 2}, y);
  expect_close(out[1], {2, 2, 2}, y_h);
}

TEST(Gru, ForwardBatchFirstWithInitialState) {
  const std::vector<float> x = {-0.43f, 0.92f, 0.54f, 0.97f, -0.58f, -0.73f, 0.82f, -0.86f, -0.85f, 0.09f, -0.82f, -0.24f};
  const std::vector<float> w = {0.72f, -0.25f, 0.11f, 0.91f, 0.47f, 0.63f, -0.8f, 0.86f, 0.22f, 0.19f, -0.82f, -0.31f};
  const std::vector<float> r = {-0.5f, -0.1f, -0.18f, -0.48f, 0.74f, -0.63f, -0.96f, 0.91f, 0.36f, -0.03f, 0.93f, -0.21f};
  const std::vector<float> b = {-0.92f, 0.56f, -0.81f, 0.27f, -0.97f, 0.87f, -0.15f, -0.49f, -0.62f, -0.17f, -0.97f, 0.3f};
  const std::vector<float> h0 = {-0.08f, -0.38f, -0.54f, -0.45f};
  const std::vector<float> y = {-0.7975541f, -0.06152534f, -0.8844605f, 0.01099024f, -0.9494793f, 0.5959424f, -0.7448575f, 0.1612801f, -0.9255402f, 0.5291322f, -0.9638855f, 0.7703888f};
  const std::vector<float> y_h = {-0.9494793f, 0.5959424f, -0.9638855f, 0.7703888f};
  std::vector<Tensor> out;
  ASSERT_TRUE(run_op("GRU", 14, {{"hidden_size", int_attr(2)}, {"layout", int_attr(1)}},
                     {make<float>({2, 3, 2}, x), make<float>({1, 6, 2}, w), make<float>({1, 6, 2}, r),
                      make<float>({1, 12}, b), Tensor(), make<float>({2, 1, 2}, h0)},
                     &out, 2)
                  .ok());
  expect_close(out[0], {2, 3, 1, 2}, y);
  expect_close(out[1], {2, 1, 2}, y_h);
}

TEST(Rnn, ReverseLeakyReluWithSequenceLengths) {
  const std::vector<float> x = {-0.5f, -0.91f, 0.35f, -0.91f, -0.77f, 0.21f, -0.62f, 0.34f, 0.83f, -0.16f, -0.34f, -0.43f};
  const std::vector<float> w = {-0.25f, 0.9f, 0.46f, 0.2f};
  const std::vector<float> r = {-0.77f, 0.22f, -0.73f, -0.52f};
  const std::vector<float> b = {0.67f, -0.79f, 0.49f, -0.28f};
  const std::vector<float> y = {-0.07513634f, -0.2535421f, -0.05043262f, -0.1675016f, 1.5415f, -0.13822f, 0.9314672f, -0.1845295f, 0.0f, 0.0f, 0.858f, -0.13124f};
  const std::vector<float> y_h = {-0.07513634f, -0.2535421f, -0.05043262f, -0.1675016f};
  std::vector<Tensor> out;
  ASSERT_TRUE(run_op("RNN", 14,
                     {{"hidden_size", int_attr(2)},
                      {"direction", string_attr("reverse")},
                      {"activations", strings_attr({"LeakyRelu"})},
                      {"activation_alpha", floats_attr({0.1f})}},
                     {make<float>({3, 2, 2}, x), make<float>({1, 2, 2}, w), make<float>({1, 2, 2}, r),
                      make<float>({1, 4}, b), make<int32_t>({2}, {2, 3})},
                     &out, 2)
                  .ok());
  expect_close(out[0], {3, 1, 2, 2}, y);
  expect_close(out[1], {1, 2, 2}, y_h);
}

TEST(Lstm, OptionalOutputsAndFloat16) {
  // Y omitted, float16 in and out; compared loosely with the float32 result.
  const std::vector<float> x = {0.5f, -0.25f, 0.75f, 1.0f}, w(8 * 2, 0.1f), r(8 * 2, -0.2f);
  std::vector<Tensor> ref, half;
  ASSERT_TRUE(run_op("LSTM", 14, {{"hidden_size", int_attr(2)}},
                     {make<float>({2, 1, 2}, x), make<float>({1, 8, 2}, w), make<float>({1, 8, 2}, r)}, &ref,
                     2)
                  .ok());
  ASSERT_TRUE(
      run_op("LSTM", 14, {{"hidden_size", int_attr(2)}},
             {make<float>({2, 1, 2}, x).to(DType::kFloat16), make<float>({1, 8, 2}, w).to(DType::kFloat16),
              make<float>({1, 8, 2}, r).to(DType::kFloat16)},
             &half, 2, /*omit=*/0)
          .ok());
  ASSERT_EQ(half[1].dtype(), DType::kFloat16);
  const Tensor back = half[1].to(DType::kFloat32);
  for (int i = 0; i < 2; ++i) EXPECT_NEAR(back.data_as<float>()[i], ref[1].data_as<float>()[i], 2e-3);
}

TEST(Lstm, ReportsBadAttributesAndShapes) {
  const std::vector<Tensor> in = {make<float>({1, 1, 2}, {1, 2}),
                                  make<float>({1, 8, 2}, std::vector<float>(16, 0.1f)),
                                  make<float>({1, 8, 2}, std::vector<float>(16, 0.1f))};
  std::vector<Tensor> out;
  EXPECT_EQ(
      run_op("LSTM", 14, {{"hidden_size", int_attr(2)}, {"direction", string_attr("sideways")}}, in, &out, 2)
          .code(),
      StatusCode::kInvalidArgument);
  EXPECT_EQ(
      run_op("LSTM", 14, {{"hidden_size", int_attr(2)}, {"activations", strings_attr({"Sigmoid", "Tanh"})}},
             in, &out, 2)
          .code(),
      StatusCode::kInvalidArgument);
  EXPECT_EQ(run_op("LSTM", 14,
                   {{"hidden_size", int_attr(2)}, {"activations", strings_attr({"Gelu", "Tanh", "Tanh"})}},
                   in, &out, 2)
                .code(),
            StatusCode::kUnsupported);
  // hidden_size disagrees with W/R.
  EXPECT_EQ(run_op("LSTM", 14, {{"hidden_size", int_attr(3)}}, in, &out, 2).code(),
            StatusCode::kInvalidArgument);
  // A sequence length beyond the sequence.
  std::vector<Tensor> with_lens = in;
  with_lens.push_back(Tensor());
  with_lens.push_back(make<int32_t>({1}, {2}));
  EXPECT_EQ(run_op("LSTM", 14, {{"hidden_size", int_attr(2)}}, with_lens, &out, 2).code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace kiln
