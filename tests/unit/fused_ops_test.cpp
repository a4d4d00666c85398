// kiln.FusedConv and kiln.FusedGemm: shape inference and the CPU kernels against the unfused
// ONNX ops (Conv / Gemm, then Add, then the activation op) on random data.
#include <gtest/gtest.h>

#include <random>

#include "op_test_util.h"
#include "ops/activation.h"

namespace kiln::testing {
namespace {

using Attrs = std::map<std::string, ir::Attribute>;

// Runs one kiln-domain node through shape inference and the CPU kernel.
Status run_fused(const std::string& op, Attrs attrs, const std::vector<Tensor>& inputs, Tensor* out) {
  ir::Graph g;
  std::vector<ir::Value*> ins;
  std::vector<const Tensor*> ptrs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    ir::Value* v = nullptr;
    if (inputs[i].defined()) {
      v = g.add_value("in" + std::to_string(i), ir::TensorType::of(inputs[i].dtype(), inputs[i].shape()));
    }
    ins.push_back(v);
    ptrs.push_back(inputs[i].defined() ? &inputs[i] : nullptr);
  }
  ir::Node* node = g.add_node(op, ins, {g.add_value("y")}, "fused");
  node->domain = "kiln";
  node->attrs = std::move(attrs);
  auto no_subgraphs = [](const ir::Graph&, std::vector<Tensor>*) { return Status(StatusCode::kInternal, "none"); };
  std::vector<Tensor> outs;
  KILN_RETURN_IF_ERROR(runtime::eval_node(*node, ptrs, no_subgraphs, &outs));
  *out = outs.at(0);
  return Status::OK();
}

Tensor random_tensor(std::vector<int64_t> shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  Tensor t(DType::kFloat32, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.data_as<float>()[i] = dist(rng);
  return t;
}

// (N, C, spatial...) <-> (N, spatial..., C) of a float tensor.
Tensor permute(const Tensor& t, bool to_last) {
  std::vector<int64_t> shape = t.shape();
  const int64_t n = shape[0], c = to_last ? shape[1] : shape.back();
  const int64_t size = t.numel() / (n * c);
  if (to_last) {
    std::rotate(shape.begin() + 1, shape.begin() + 2, shape.end());
  } else {
    std::rotate(shape.begin() + 1, shape.end() - 1, shape.end());
  }
  Tensor out(DType::kFloat32, shape);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t k = 0; k < c; ++k) {
      for (int64_t s = 0; s < size; ++s) {
        const int64_t first = (i * c + k) * size + s, last = (i * size + s) * c + k;
        out.data_as<float>()[to_last ? last : first] = t.data_as<float>()[to_last ? first : last];
      }
    }
  }
  return out;
}

void expect_near(const Tensor& want, const Tensor& got, double tol) {
  ASSERT_EQ(want.shape(), got.shape());
  const Tensor a = want.to(DType::kFloat32), b = got.to(DType::kFloat32);
  for (int64_t i = 0; i < a.numel(); ++i) {
    ASSERT_NEAR(a.data_as<float>()[i], b.data_as<float>()[i], tol * (1 + std::abs(a.data_as<float>()[i])))
        << "element " << i;
  }
}

// The unfused reference: act_op(Conv(x, w, b) + z) with ONNX ops.
Tensor reference_conv(const Attrs& conv_attrs, const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& z,
                      const std::string& act_op, const Attrs& act_attrs) {
  Tensor y;
  EXPECT_TRUE(run_op("Conv", 17, conv_attrs, {x, w, b}, &y).ok());
  if (z.defined()) EXPECT_TRUE(run_op("Add", 17, {}, {y, z}, &y).ok());
  if (!act_op.empty()) EXPECT_TRUE(run_op(act_op, 18, act_attrs, {y}, &y).ok());
  return y;
}

Attrs with_activation(Attrs attrs, ops::Activation act) {
  ir::Node n;
  ops::set_activation(n, act);
  attrs.insert(n.attrs.begin(), n.attrs.end());
  return attrs;
}

struct ConvCase {
  std::vector<int64_t> x, w;
  Attrs attrs;
  ops::Activation act;
  std::string act_op;
  Attrs act_attrs;
};

std::vector<ConvCase> conv_cases() {
  using K = ops::ActivationKind;
  return {
      {{2, 4, 7, 6}, {6, 4, 3, 3}, {{"pads", ints_attr({1, 1, 1, 1})}}, {K::kRelu}, "Relu", {}},
      {{1, 6, 9, 9}, {4, 3, 3, 3}, {{"group", int_attr(2)}, {"dilations", ints_attr({2, 2})}}, {K::kLeakyRelu, 0.1f},
       "LeakyRelu", {{"alpha", float_attr(0.1f)}}},
      {{1, 4, 8, 8}, {4, 1, 3, 3}, {{"group", int_attr(4)}, {"strides", ints_attr({2, 2})},
                                     {"auto_pad", string_attr("SAME_UPPER")}},
       {K::kHardSwish}, "HardSwish", {}},
      {{1, 3, 10}, {5, 3, 2}, {{"strides", ints_attr({2})}}, {K::kSigmoid}, "Sigmoid", {}},
      {{1, 8, 5, 5}, {8, 8, 1, 1}, {}, {K::kNone}, "", {}},
  };
}

TEST(FusedConv, MatchesConvAddActivation) {
  uint32_t seed = 1;
  for (const ConvCase& c : conv_cases()) {
    for (bool with_z : {false, true}) {
      const Tensor x = random_tensor(c.x, seed++), w = random_tensor(c.w, seed++), b = random_tensor({c.w[0]}, seed++);
      Tensor y;
      ASSERT_TRUE(run_op("Conv", 17, c.attrs, {x, w, b}, &y).ok());
      const Tensor z = with_z ? random_tensor(y.shape(), seed++) : Tensor();
      const Tensor want = reference_conv(c.attrs, x, w, b, z, c.act_op, c.act_attrs);
      Tensor got;
      Status st = run_fused("FusedConv", with_activation(c.attrs, c.act), {x, w, b, z}, &got);
      ASSERT_TRUE(st.ok()) << st.to_string();
      expect_near(want, got, 1e-5);

      // The same in channels-last layout: X, Z and Y are (N, spatial..., C).
      Attrs last = with_activation(c.attrs, c.act);
      last["channels_last"] = int_attr(1);
      st = run_fused("FusedConv", last, {permute(x, true), w, b, z.defined() ? permute(z, true) : Tensor()}, &got);
      ASSERT_TRUE(st.ok()) << st.to_string();
      expect_near(permute(want, true), got, 1e-5);
    }
  }
}

TEST(FusedConv, Float16ComputesInFloat) {
  const Tensor x = random_tensor({1, 4, 6, 6}, 11), w = random_tensor({8, 4, 3, 3}, 12);
  const Tensor b = random_tensor({8}, 13), z = random_tensor({1, 8, 4, 4}, 14);
  const Tensor want = reference_conv({}, x, w, b, z, "Relu", {});
  for (DType t : {DType::kFloat16, DType::kBFloat16}) {
    Tensor got;
    Status st = run_fused("FusedConv", with_activation({}, {ops::ActivationKind::kRelu}),
                          {x.to(t), w.to(t), b.to(t), z.to(t)}, &got);
    ASSERT_TRUE(st.ok()) << st.to_string();
    EXPECT_EQ(got.dtype(), t);
    expect_near(want, got, t == DType::kFloat16 ? 1e-2 : 3e-2);
  }
}

TEST(FusedConv, ClipWithoutBias) {
  const Tensor x = random_tensor({1, 2, 5, 5}, 21), w = random_tensor({3, 2, 3, 3}, 22);
  Tensor want, got;
  ASSERT_TRUE(run_op("Conv", 17, {}, {x, w}, &want).ok());
  ASSERT_TRUE(run_op("Clip", 13, {}, {want, make<float>({}, {-0.5f}), make<float>({}, {0.5f})}, &want).ok());
  ASSERT_TRUE(run_fused("FusedConv", with_activation({}, {ops::ActivationKind::kClip, -0.5f, 0.5f}), {x, w}, &got).ok());
  expect_near(want, got, 1e-6);
}

TEST(FusedConv, BadInputsAreErrors) {
  const Tensor x = random_tensor({1, 2, 5, 5}, 31), w = random_tensor({3, 2, 3, 3}, 32);
  Tensor y;
  Status st = run_fused("FusedConv", {}, {x, w, Tensor(), random_tensor({1, 3, 5, 5}, 33)}, &y);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.to_string().find("residual"), std::string::npos) << st.to_string();
  st = run_fused("FusedConv", {{"activation", string_attr("Softplus")}}, {x, w}, &y);
  EXPECT_FALSE(st.ok());
  st = run_fused("FusedConv", {{"channels_last", int_attr(2)}}, {x, w}, &y);
  EXPECT_FALSE(st.ok());
  st = run_fused("FusedConv", {}, {x.to(DType::kFloat64), w.to(DType::kFloat64)}, &y);
  EXPECT_FALSE(st.ok());
}

TEST(FusedGemm, MatchesGemmActivation) {
  const Tensor a = random_tensor({5, 7}, 41), b = random_tensor({4, 7}, 42), c = random_tensor({4}, 43);
  const Attrs gemm = {{"transB", int_attr(1)}, {"alpha", float_attr(0.5f)}, {"beta", float_attr(2.0f)}};
  Tensor want, got;
  ASSERT_TRUE(run_op("Gemm", 13, gemm, {a, b, c}, &want).ok());
  ASSERT_TRUE(run_op("Tanh", 13, {}, {want}, &want).ok());
  Status st = run_fused("FusedGemm", with_activation(gemm, {ops::ActivationKind::kTanh}), {a, b, c}, &got);
  ASSERT_TRUE(st.ok()) << st.to_string();
  expect_near(want, got, 1e-5);

  // fp16 without C, Gelu: the product and the activation in float, rounded once.
  const Tensor b2 = random_tensor({7, 3}, 44);
  ASSERT_TRUE(run_op("MatMul", 13, {}, {a, b2}, &want).ok());
  ASSERT_TRUE(run_op("Gelu", 20, {}, {want}, &want).ok());
  st = run_fused("FusedGemm", with_activation({}, {ops::ActivationKind::kGelu}),
                 {a.to(DType::kFloat16), b2.to(DType::kFloat16)}, &got);
  ASSERT_TRUE(st.ok()) << st.to_string();
  expect_near(want, got, 1e-2);
  EXPECT_EQ(got.dtype(), DType::kFloat16);
}

}  // namespace
}  // namespace kiln::testing
