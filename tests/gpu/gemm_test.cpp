// cuBLASLt Gemm / FusedGemm / MatMul against the CPU reference. fp32 strict (rtol 1e-4,
// atol 1e-5): precision "fp32" computes with CUBLAS_COMPUTE_32F (no TF32), so only the order
// of the K-term sums differs from OpenBLAS.
#include <fmt/format.h>

#include "gpu_test_util.h"

namespace kiln {
namespace {

constexpr double kRtol = 1e-4, kAtol = 1e-5;

std::string shape_text(const std::vector<int64_t>& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) out += (i ? "," : "") + std::to_string(s[i]);
  return out;
}

void check_no_fallback(const std::string& text, const std::string& stem, const std::map<std::string, Tensor>& in) {
  auto g = testing::import_text(text, stem + "_x");
  std::string layers;
  int fallbacks = -1;
  testing::run_executor(*g, in, &layers, &fallbacks);
  EXPECT_EQ(fallbacks, 0) << layers;
  EXPECT_NE(layers.find("cublasLt"), std::string::npos) << layers;
}

struct GemmCase {
  const char* name;
  int64_t m, n, k;
  int trans_a, trans_b;
  std::vector<int64_t> c_shape;  // empty: no C
  bool c_constant;
  float alpha, beta;
};

void PrintTo(const GemmCase& c, std::ostream* os) { *os << c.name; }

class GpuGemm : public ::testing::TestWithParam<GemmCase> {};

TEST_P(GpuGemm, MatchesCpu) {
  KILN_SKIP_WITHOUT_GPU();
  const GemmCase& gc = GetParam();
  const std::vector<int64_t> as = gc.trans_a ? std::vector<int64_t>{gc.k, gc.m} : std::vector<int64_t>{gc.m, gc.k};
  const std::vector<int64_t> bs = gc.trans_b ? std::vector<int64_t>{gc.n, gc.k} : std::vector<int64_t>{gc.k, gc.n};
  const Tensor b = testing::random_tensor(DType::kFloat32, bs, 2);
  std::string inits = testing::initializer("b", b), c_input, c_arg;
  std::map<std::string, Tensor> in = {{"a", testing::random_tensor(DType::kFloat32, as, 1)}};
  if (!gc.c_shape.empty()) {
    const Tensor c = testing::random_tensor(DType::kFloat32, gc.c_shape, 3);
    c_arg = ", c";
    if (gc.c_constant) {
      inits += ", " + testing::initializer("c", c);
    } else {
      c_input = fmt::format(", float[{}] c", shape_text(gc.c_shape));
      in["c"] = c;
    }
  }
  const std::string text = fmt::format(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[{}] a{}) => (float[{},{}] y) <{}> {{
      y = Gemm <transA = {}, transB = {}, alpha = {:.3f}, beta = {:.3f}> (a, b{})
    }})",
                                       shape_text(as), c_input, gc.m, gc.n, inits, gc.trans_a, gc.trans_b, gc.alpha,
                                       gc.beta, c_arg);
  testing::expect_backends_agree(text, std::string("gpu_gemm_") + gc.name, in, kRtol, kAtol, 0);
  check_no_fallback(text, std::string("gpu_gemm_") + gc.name, in);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, GpuGemm,
    ::testing::Values(GemmCase{"plain", 7, 5, 3, 0, 0, {}, false, 1, 1},
                      GemmCase{"bias_row", 16, 32, 64, 0, 1, {32}, true, 1, 1},
                      GemmCase{"bias_row_beta", 16, 32, 64, 0, 1, {1, 32}, true, 0.5f, 2},
                      GemmCase{"bias_runtime", 9, 10, 11, 0, 0, {10}, false, 1, 1},
                      GemmCase{"c_full", 8, 12, 20, 1, 0, {8, 12}, false, 1.5f, 0.25f},
                      GemmCase{"c_column_const", 8, 12, 20, 1, 1, {8, 1}, true, 1, 1},
                      GemmCase{"c_scalar_const", 4, 6, 5, 0, 0, {1}, true, 1, 3},
                      GemmCase{"fc_layer", 2, 1000, 512, 0, 1, {1000}, true, 1, 1}),
    [](const ::testing::TestParamInfo<GemmCase>& i) { return std::string(i.param.name); });

class GpuFusedGemm : public ::testing::TestWithParam<std::pair<const char*, const char*>> {};

TEST_P(GpuFusedGemm, MatchesCpu) {
  KILN_SKIP_WITHOUT_GPU();
  const auto [act, params] = GetParam();
  const Tensor b = testing::random_tensor(DType::kFloat32, {24, 40}, 2);
  const Tensor c = testing::random_tensor(DType::kFloat32, {24}, 3);
  const std::string text = fmt::format(R"(
    <ir_version: 8, opset_import: ["" : 13, "kiln" : 1]>
    g (float[6,40] a) => (float[6,24] y) <{}, {}> {{
      y = kiln.FusedGemm <transB = 1, activation = "{}"{}> (a, b, c)
    }})",
                                       testing::initializer("b", b), testing::initializer("c", c), act, params);
  const std::map<std::string, Tensor> in = {{"a", testing::random_tensor(DType::kFloat32, {6, 40}, 1)}};
  testing::expect_backends_agree(text, std::string("gpu_fusedgemm_") + act, in, kRtol, kAtol, 0);
  check_no_fallback(text, std::string("gpu_fusedgemm_") + act, in);
}

INSTANTIATE_TEST_SUITE_P(Activations, GpuFusedGemm,
                         ::testing::Values(std::make_pair("Relu", ""), std::make_pair("Gelu", ""),
                                           std::make_pair("Gelu", ", activation_params = [1.0]"),
                                           std::make_pair("LeakyRelu", ", activation_params = [0.2]"),
                                           std::make_pair("Sigmoid", "")),
                         [](const auto& i) { return std::string(i.param.first) + std::to_string(i.index); });

struct MatMulCase {
  const char* name;
  std::vector<int64_t> a, b;
  bool b_constant;
};

void PrintTo(const MatMulCase& c, std::ostream* os) { *os << c.name; }

class GpuMatMul : public ::testing::TestWithParam<MatMulCase> {};

TEST_P(GpuMatMul, MatchesCpu) {
  KILN_SKIP_WITHOUT_GPU();
  const MatMulCase& mc = GetParam();
  std::map<std::string, Tensor> in = {{"a", testing::random_tensor(DType::kFloat32, mc.a, 1)}};
  const Tensor b = testing::random_tensor(DType::kFloat32, mc.b, 2);
  std::string b_input, inits;
  if (mc.b_constant) {
    inits = "<" + testing::initializer("b", b) + ">";
  } else {
    b_input = fmt::format(", float[{}] b", shape_text(mc.b));
    in["b"] = b;
  }
  const std::string text = fmt::format(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[{}] a{}) => (float y) {} {{
      y = MatMul (a, b)
    }})",
                                       shape_text(mc.a), b_input, inits);
  testing::expect_backends_agree(text, std::string("gpu_matmul_") + mc.name, in, kRtol, kAtol, 0);
  check_no_fallback(text, std::string("gpu_matmul_") + mc.name, in);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, GpuMatMul,
    ::testing::Values(MatMulCase{"2d", {5, 7}, {7, 3}, false}, MatMulCase{"batched", {4, 6, 8}, {4, 8, 5}, false},
                      MatMulCase{"fold_m", {2, 3, 6, 8}, {8, 16}, true},
                      MatMulCase{"shared_a", {6, 8}, {3, 8, 5}, false},
                      MatMulCase{"broadcast", {2, 1, 4, 6}, {1, 3, 6, 5}, false},
                      MatMulCase{"vec_a", {9}, {2, 9, 4}, false}, MatMulCase{"vec_b", {3, 4, 9}, {9}, true},
                      MatMulCase{"attention_like", {2, 4, 16, 32}, {2, 4, 32, 16}, false}),
    [](const ::testing::TestParamInfo<MatMulCase>& i) { return std::string(i.param.name); });

}  // namespace
}  // namespace kiln
