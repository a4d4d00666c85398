// cuDNN convolutions against the CPU reference. fp32 is compared strictly (rtol 1e-4, atol
// 1e-5): kiln's "fp32" precision turns TF32 and the FFT/Winograd algorithms off, so the only
// difference left is the order of the sums (a few ulps per term for these small K).
#include <fmt/format.h>

#include "gpu_test_util.h"

namespace kiln {
namespace {

constexpr double kRtol = 1e-4, kAtol = 1e-5;

struct ConvCase {
  const char* name;
  int64_t n, c, h, w, m, k;
  const char* attrs;  // extra Conv attributes
  int64_t group;
};

std::string conv_model(const ConvCase& cc, const Tensor& w, const Tensor& b) {
  return fmt::format(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[{},{},{},{}] x) => (float[?,?,?,?] y) <{}, {}> {{
      y = Conv <group = {}{}> (x, w, b)
    }})",
                     cc.n, cc.c, cc.h, cc.w, testing::initializer("w", w), testing::initializer("b", b), cc.group,
                     cc.attrs);
}

void PrintTo(const ConvCase& c, std::ostream* os) { *os << c.name; }

class GpuConv : public ::testing::TestWithParam<ConvCase> {};

TEST_P(GpuConv, MatchesCpuAndUsesCudnn) {
  KILN_SKIP_WITHOUT_GPU();
  const ConvCase& cc = GetParam();
  const Tensor w = testing::random_tensor(DType::kFloat32, {cc.m, cc.c / cc.group, cc.k, cc.k}, 2);
  const Tensor b = testing::random_tensor(DType::kFloat32, {cc.m}, 3);
  const std::string text = conv_model(cc, w, b);
  const std::map<std::string, Tensor> in = {{"x", testing::random_tensor(DType::kFloat32, {cc.n, cc.c, cc.h, cc.w}, 1)}};
  testing::expect_backends_agree(text, std::string("gpu_conv_") + cc.name, in, kRtol, kAtol, 0);
  auto g = testing::import_text(text, std::string("gpu_conv_x_") + cc.name);
  std::string layers;
  int fallbacks = -1;
  testing::run_executor(*g, in, &layers, &fallbacks);
  EXPECT_EQ(fallbacks, 0) << layers;
  EXPECT_NE(layers.find("cudnn conv"), std::string::npos) << layers;
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, GpuConv,
    ::testing::Values(ConvCase{"plain3x3", 2, 8, 12, 12, 16, 3, ", pads = [1,1,1,1]", 1},
                      ConvCase{"stride2", 1, 4, 11, 11, 8, 3, ", strides = [2,2], pads = [1,1,1,1]", 1},
                      ConvCase{"dilated", 1, 4, 15, 15, 6, 3, ", dilations = [2,2], pads = [2,2,2,2]", 1},
                      ConvCase{"groups", 2, 8, 9, 9, 12, 3, ", pads = [1,1,1,1]", 4},
                      ConvCase{"depthwise", 1, 16, 10, 10, 16, 3, ", strides = [2,2], pads = [1,1,1,1]", 16},
                      ConvCase{"pointwise", 3, 32, 7, 7, 24, 1, "", 1},
                      ConvCase{"same_upper", 1, 3, 8, 8, 4, 3, ", auto_pad = \"SAME_UPPER\"", 1},
                      ConvCase{"big_kernel", 1, 3, 32, 32, 8, 7, ", strides = [2,2], pads = [3,3,3,3]", 1}),
    [](const ::testing::TestParamInfo<ConvCase>& i) { return std::string(i.param.name); });

TEST(GpuConv1d, MatchesCpu) {
  KILN_SKIP_WITHOUT_GPU();
  const Tensor w = testing::random_tensor(DType::kFloat32, {6, 4, 5}, 2);
  const std::string text = fmt::format(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2,4,30] x) => (float[?,?,?] y) <{}> {{
      y = Conv <pads = [2,2], strides = [3]> (x, w)
    }})",
                                       testing::initializer("w", w));
  testing::expect_backends_agree(text, "gpu_conv1d", {{"x", testing::random_tensor(DType::kFloat32, {2, 4, 30}, 1)}},
                                 kRtol, kAtol, 0);
}

TEST(GpuConv, WeightsComputedAtRunTime) {
  KILN_SKIP_WITHOUT_GPU();
  const char* text = R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,4,8,8] x, float[8,4,3,3] w, float[8] b) => (float[?,?,?,?] y) {
      y = Conv <pads = [1,1,1,1]> (x, w, b)
    })";
  testing::expect_backends_agree(text, "gpu_conv_dynamic_w",
                                 {{"x", testing::random_tensor(DType::kFloat32, {1, 4, 8, 8}, 1)},
                                  {"w", testing::random_tensor(DType::kFloat32, {8, 4, 3, 3}, 2)},
                                  {"b", testing::random_tensor(DType::kFloat32, {8}, 3)}},
                                 kRtol, kAtol, 0);
}

// kiln.FusedConv written directly (optimization level 0 keeps it as is): residual Z, each
// activation (Relu takes cuDNN's fused call, the others kiln's epilogue), both layouts.
struct FusedCase {
  const char* name;
  const char* activation;
  const char* params;
  bool channels_last;
  bool residual;
};

void PrintTo(const FusedCase& c, std::ostream* os) { *os << c.name; }

class GpuFusedConv : public ::testing::TestWithParam<FusedCase> {};

TEST_P(GpuFusedConv, MatchesCpu) {
  KILN_SKIP_WITHOUT_GPU();
  const FusedCase& fc = GetParam();
  const Tensor w = testing::random_tensor(DType::kFloat32, {8, 4, 3, 3}, 2);
  const Tensor b = testing::random_tensor(DType::kFloat32, {8}, 3);
  const std::string xs = fc.channels_last ? "2,9,9,4" : "2,4,9,9";
  const std::string ys = fc.channels_last ? "2,9,9,8" : "2,8,9,9";
  const std::string text = fmt::format(R"(
    <ir_version: 8, opset_import: ["" : 13, "kiln" : 1]>
    g (float[{}] x{}) => (float[{}] y) <{}, {}> {{
      y = kiln.FusedConv <pads = [1,1,1,1], activation = "{}"{}, channels_last = {}> (x, w, b{})
    }})",
                                       xs, fc.residual ? fmt::format(", float[{}] z", ys) : "", ys,
                                       testing::initializer("w", w), testing::initializer("b", b), fc.activation,
                                       fc.params, fc.channels_last ? 1 : 0, fc.residual ? ", z" : "");
  std::map<std::string, Tensor> in = {
      {"x", testing::random_tensor(DType::kFloat32, fc.channels_last ? std::vector<int64_t>{2, 9, 9, 4} : std::vector<int64_t>{2, 4, 9, 9}, 1)}};
  if (fc.residual) {
    in["z"] = testing::random_tensor(DType::kFloat32, fc.channels_last ? std::vector<int64_t>{2, 9, 9, 8} : std::vector<int64_t>{2, 8, 9, 9}, 4);
  }
  testing::expect_backends_agree(text, std::string("gpu_fusedconv_") + fc.name, in, kRtol, kAtol, 0);
  auto g = testing::import_text(text, std::string("gpu_fusedconv_x_") + fc.name);
  std::string layers;
  int fallbacks = -1;
  testing::run_executor(*g, in, &layers, &fallbacks);
  EXPECT_EQ(fallbacks, 0) << layers;
  std::printf("%s", layers.c_str());
}

INSTANTIATE_TEST_SUITE_P(
    Epilogues, GpuFusedConv,
    ::testing::Values(FusedCase{"relu_residual", "Relu", "", false, true}, FusedCase{"relu", "Relu", "", false, false},
                      FusedCase{"none_residual", "", "", false, true},
                      FusedCase{"clip_nhwc", "Clip", ", activation_params = [0.0, 0.5]", true, false},
                      FusedCase{"relu_residual_nhwc", "Relu", "", true, true},
                      FusedCase{"sigmoid_residual", "Sigmoid", "", false, true},
                      FusedCase{"silu_nhwc", "Silu", "", true, true},
                      FusedCase{"leaky", "LeakyRelu", ", activation_params = [0.1]", false, false},
                      FusedCase{"gelu", "Gelu", "", false, false}),
    [](const ::testing::TestParamInfo<FusedCase>& i) { return std::string(i.param.name); });

// Half precision: the CPU reference computes in float and rounds once, cuDNN accumulates in
// float and rounds once, so a couple of fp16 ulps (1e-3 relative) apart.
TEST(GpuConvHalf, Fp16AndBf16MatchCpu) {
  KILN_SKIP_WITHOUT_GPU();
  for (const char* t : {"float16", "bfloat16"}) {
    const DType dt = dtype_from_name(t);
    // W as an input: the text format's half-precision initializers are not portable.
    const std::string text = fmt::format(R"(
      <ir_version: 8, opset_import: ["" : 13]>
      g ({}[2,8,10,10] x, {}[8,8,3,3] w) => ({}[?,?,?,?] y) {{
        y = Conv <pads = [1,1,1,1]> (x, w)
      }})",
                                         t, t, t);
    const double rtol = dt == DType::kFloat16 ? 2e-3 : 2e-2;
    testing::expect_backends_agree(text, std::string("gpu_conv_") + t,
                                   {{"x", testing::random_tensor(dt, {2, 8, 10, 10}, 1)},
                                    {"w", testing::random_tensor(dt, {8, 8, 3, 3}, 2)}},
                                   rtol, rtol, 0);
  }
}

}  // namespace
}  // namespace kiln
