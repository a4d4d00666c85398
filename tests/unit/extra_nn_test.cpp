// RotaryEmbedding against the conformance suite's expanded tests (same inputs/outputs, the
// node built directly), plus Swish and RMSNormalization spot checks.
#include <gtest/gtest.h>
#include <kiln/kiln.h>
#include <kiln/tensor_io.h>

#include <cmath>
#include <filesystem>

#include "test_models.h"

namespace kiln {
namespace {

const std::string kNode = "/work/shared/conformance/onnx-node/";

Tensor read(const std::string& path) {
  Tensor t;
  Status st = read_tensor_file(path, &t);
  EXPECT_TRUE(st.ok()) << st.to_string();
  return t.to(DType::kFloat32);
}

void check_rotary(const std::string& test, bool with_pos) {
  const std::string dir = kNode + test + "/test_data_set_0/";
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << dir;
  Tensor x = read(dir + "input_0.pb"), c = read(dir + "input_1.pb"), s = read(dir + "input_2.pb");
  Tensor expect = read(dir + "output_0.pb");
  auto shp = [](const Tensor& t) {
    std::string r;
    for (int64_t d : t.shape()) r += (r.empty() ? "" : ",") + std::to_string(d);
    return "[" + r + "]";
  };
  std::map<std::string, Tensor> in{{"x", x}, {"c", c}, {"s", s}};
  std::string pos_decl, pos_arg;
  if (with_pos) {
    Tensor p;
    ASSERT_TRUE(read_tensor_file(dir + "input_3.pb", &p).ok());
    in["p"] = p;
    pos_decl = ", int64" + shp(p) + " p";
    pos_arg = ", p";
  }
  const std::string text = "<ir_version: 10, opset_import: [\"\" : 23]>\ng (float" + shp(x) + " x, float" +
                           shp(c) + " c, float" + shp(s) + " s" + pos_decl + ") => (float" + shp(x) +
                           " y) {\n y = RotaryEmbedding<rotary_embedding_dim = " + std::to_string(2 * c.dim(-1)) +
                           ">(x, c, s" + pos_arg + ")\n}\n";
  std::unique_ptr<Session> sess;
  ASSERT_TRUE(Session::load(testing::write_text_model(text, "extra_nn_" + test), SessionOptions{}, &sess).ok());
  std::vector<Tensor> out;
  Status st = sess->run(in, &out);
  ASSERT_TRUE(st.ok()) << st.to_string();
  ASSERT_EQ(out[0].shape(), expect.shape());
  for (int64_t i = 0; i < expect.numel(); ++i)
    ASSERT_NEAR(out[0].data_as<float>()[i], expect.data_as<float>()[i], 1e-5) << i;
}

TEST(ExtraNn, RotaryEmbeddingMatchesExpanded) { check_rotary("test_rotary_embedding_expanded", true); }
TEST(ExtraNn, RotaryEmbeddingNoPositionIds) { check_rotary("test_rotary_embedding_no_position_ids_expanded", false); }
TEST(ExtraNn, RotaryEmbeddingRotaryDim) {
  check_rotary("test_rotary_embedding_no_position_ids_rotary_dim_expanded", false);
}


// Runs a one-node float model on x (shape [2,3]) and returns y.
std::vector<float> run_one(const std::string& node, int opset, const std::vector<float>& xv) {
  const std::string text = "<ir_version: 10, opset_import: [\"\" : " + std::to_string(opset) +
                           "]>\ng (float[2,3] x, float[3] sc) => (float[2,3] y) {\n y = " + node + "\n}\n";
  std::unique_ptr<Session> sess;
  Status st = Session::load(testing::write_text_model(text, "extra_nn_one"), SessionOptions{}, &sess);
  EXPECT_TRUE(st.ok()) << st.to_string();
  if (!sess) return {};
  Tensor x(DType::kFloat32, {2, 3}), sc(DType::kFloat32, {3});
  for (int i = 0; i < 6; ++i) x.data_as<float>()[i] = xv[i];
  for (int i = 0; i < 3; ++i) sc.data_as<float>()[i] = static_cast<float>(i + 1);
  std::map<std::string, Tensor> in{{"x", x}, {"sc", sc}};
  std::vector<Tensor> out;
  st = sess->run(in, &out);
  EXPECT_TRUE(st.ok()) << st.to_string();
  if (!st.ok()) return {};
  return std::vector<float>(out[0].data_as<float>(), out[0].data_as<float>() + 6);
}

TEST(ExtraNn, SwishUsesAlpha) {
  const std::vector<float> x = {-2, -1, 0, 0.5f, 1, 3};
  const auto y = run_one("Swish<alpha = 0.5>(x)", 24, x);
  ASSERT_EQ(y.size(), 6u);
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(y[i], x[i] / (1 + std::exp(-0.5 * x[i])), 1e-6);
}

TEST(ExtraNn, RmsNormalizationLastAxis) {
  const std::vector<float> x = {1, 2, 3, -4, 0, 4};
  const auto y = run_one("RMSNormalization<epsilon = 0.0>(x, sc)", 23, x);
  ASSERT_EQ(y.size(), 6u);
  for (int r = 0; r < 2; ++r) {
    double ss = 0;
    for (int i = 0; i < 3; ++i) ss += x[r * 3 + i] * x[r * 3 + i];
    for (int i = 0; i < 3; ++i) EXPECT_NEAR(y[r * 3 + i], x[r * 3 + i] / std::sqrt(ss / 3) * (i + 1), 1e-5);
  }
}

}  // namespace
}  // namespace kiln
