// ConvTranspose through cuDNN's backward data against the CPU reference. fp32 is strict (no
// TF32, no FFT/Winograd), so as in conv_test.cpp only the order of the sums differs: rtol 1e-4.
// Cases whose pads cuDNN cannot express run through the host fallback and must still agree.
#include <fmt/format.h>

#include "kernels_test_util.h"

namespace kiln {
namespace {

constexpr double kRtol = 1e-4, kAtol = 1e-5;

struct TransposeCase {
  const char* name;
  std::vector<int64_t> x;  // [N, C_in, spatial...]
  int64_t c_out, k, group;
  const char* attrs;  // extra ConvTranspose attributes
  bool bias;
  bool on_gpu;  // false: pads cuDNN cannot express, the host fallback runs
};

void PrintTo(const TransposeCase& c, std::ostream* os) { *os << c.name; }

std::string dims(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}

class GpuConvTranspose : public ::testing::TestWithParam<TransposeCase> {};

TEST_P(GpuConvTranspose, MatchesCpuAndUsesCudnn) {
  KILN_KERNEL_TEST_START();  // with KILN_GPU_TESTS_CPU_ONLY=1 the CPU half checks the models here
  const TransposeCase& tc = GetParam();
  std::vector<int64_t> wshape = {tc.x[1], tc.c_out / tc.group};
  wshape.insert(wshape.end(), tc.x.size() - 2, tc.k);
  const Tensor w = testing::random_tensor(DType::kFloat32, wshape, 2, -1.0f, 1.0f);
  const Tensor b = testing::random_tensor(DType::kFloat32, {tc.c_out}, 3, -1.0f, 1.0f);
  const std::string y_type = tc.x.size() == 3 ? "float[?,?,?]" : "float[?,?,?,?]";
  const std::string text = fmt::format(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[{}] x) => ({} y) <{}{}> {{
      y = ConvTranspose <group = {}{}> (x, w{})
    }})",
                                       dims(tc.x), y_type, testing::initializer("w", w),
                                       tc.bias ? ", " + testing::initializer("b", b) : "", tc.group, tc.attrs,
                                       tc.bias ? ", b" : "");
  const std::map<std::string, Tensor> in = {{"x", testing::random_tensor(DType::kFloat32, tc.x, 1, -1.0f, 1.0f)}};
  const testing::Tol tol{kRtol, kAtol};
  testing::expect_gpu_matches_cpu(text, in, std::string("convt_") + tc.name, &tol);
  if (!testing::gpu_present()) return;
  auto g = testing::import_text(text, std::string("gpu_convt_x_") + tc.name);
  std::string layers;
  int fallbacks = -1;
  testing::run_executor(*g, in, &layers, &fallbacks);
  if (tc.on_gpu) {
    EXPECT_EQ(fallbacks, 0) << layers;
    EXPECT_NE(layers.find("cudnn convtranspose"), std::string::npos) << layers;
  } else {
    EXPECT_EQ(fallbacks, 1) << layers;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, GpuConvTranspose,
    ::testing::Values(
        // PP-OCR det's upsampling: k2 s2, with and without bias.
        TransposeCase{"stride2", {1, 8, 10, 12}, 4, 2, 1, ", strides = [2,2]", false, true},
        TransposeCase{"stride2_bias", {2, 8, 10, 12}, 4, 2, 1, ", strides = [2,2]", true, true},
        TransposeCase{"pads", {1, 6, 7, 7}, 5, 4, 1, ", strides = [2,2], pads = [1,1,1,1]", true, true},
        TransposeCase{"output_padding", {1, 4, 6, 5}, 6, 3, 1,
                      ", strides = [2,2], pads = [1,1,1,1], output_padding = [1,1]", true, true},
        TransposeCase{"group2", {2, 8, 6, 6}, 6, 3, 2, ", strides = [2,2], pads = [1,1,1,1]", true, true},
        TransposeCase{"dilation", {1, 4, 7, 7}, 4, 3, 1, ", dilations = [2,2], pads = [2,2,2,2]", true, true},
        // Begin pads larger than end pads: cuDNN's pad is the begin pad, the end pad only
        // changes Y's size.
        TransposeCase{"pads_begin_bigger", {1, 4, 6, 6}, 4, 3, 1, ", strides = [2,2], pads = [1,1,0,0]", true, true},
        TransposeCase{"same_lower", {1, 4, 6, 6}, 4, 3, 1, ", strides = [2,2], auto_pad = \"SAME_LOWER\"", true, true},
        // SAME_UPPER puts the odd pad at the end: not expressible, the fallback runs.
        TransposeCase{"same_upper_fallback", {1, 4, 6, 6}, 4, 3, 1, ", strides = [2,2], auto_pad = \"SAME_UPPER\"",
                      true, false},
        TransposeCase{"conv1d", {2, 4, 9}, 6, 3, 1, ", strides = [3], pads = [1,1], output_padding = [2]", true,
                      true}),
    [](const ::testing::TestParamInfo<TransposeCase>& i) { return std::string(i.param.name); });

TEST(GpuConvTranspose, WeightsAndBiasComputedAtRunTime) {
  KILN_KERNEL_TEST_START();
  const char* text = R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,4,5,5] x, float[4,3,3,3] w, float[6] b) => (float[?,?,?,?] y) {
      y = ConvTranspose <strides = [2,2], pads = [1,1,1,1], group = 2> (x, w, b)
    })";
  const testing::Tol tol{kRtol, kAtol};
  testing::expect_gpu_matches_cpu(text, {{"x", testing::random_tensor(DType::kFloat32, {1, 4, 5, 5}, 1, -1.0f, 1.0f)},
                                  {"w", testing::random_tensor(DType::kFloat32, {4, 3, 3, 3}, 2, -1.0f, 1.0f)},
                                  {"b", testing::random_tensor(DType::kFloat32, {6}, 3, -1.0f, 1.0f)}},
                                 "convt_dynamic_w", &tol);
}

// fp16/bf16: both backends compute in float and round once; the sums here are short
// (C_in * k*k / stride^2 <= 32 terms), so a couple of ulps: 2e-3 (fp16) and 2e-2 (bf16)
// relative, as for Conv in conv_test.cpp.
TEST(GpuConvTransposeHalf, Fp16AndBf16MatchCpu) {
  KILN_KERNEL_TEST_START();
  for (const char* t : {"float16", "bfloat16"}) {
    const DType dt = dtype_from_name(t);
    // W and B as inputs: the text format's half-precision initializers are not portable.
    const std::string text = fmt::format(R"(
      <ir_version: 8, opset_import: ["" : 13]>
      g ({}[2,8,6,6] x, {}[8,4,2,2] w, {}[4] b) => ({}[?,?,?,?] y) {{
        y = ConvTranspose <strides = [2,2]> (x, w, b)
      }})",
                                         t, t, t, t);
    const double rtol = dt == DType::kFloat16 ? 2e-3 : 2e-2;
    const testing::Tol tol{rtol, rtol};
    testing::expect_gpu_matches_cpu(text, {{"x", testing::random_tensor(dt, {2, 8, 6, 6}, 1, -1.0f, 1.0f)},
                                    {"w", testing::random_tensor(dt, {8, 4, 2, 2}, 2, -1.0f, 1.0f)},
                                    {"b", testing::random_tensor(dt, {4}, 3, -1.0f, 1.0f)}},
                                    std::string("convt_") + t, &tol);
  }
}

// 3-D is not taken by the cuDNN layer: the fallback runs and agrees.
TEST(GpuConvTranspose, ThreeDFallsBack) {
  KILN_KERNEL_TEST_START();
  const Tensor w = testing::random_tensor(DType::kFloat32, {2, 3, 2, 2, 2}, 2, -1.0f, 1.0f);
  const std::string text = fmt::format(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,2,3,3,3] x) => (float[?,?,?,?,?] y) <{}> {{
      y = ConvTranspose <strides = [2,2,2]> (x, w)
    }})",
                                       testing::initializer("w", w));
  const std::map<std::string, Tensor> in = {{"x", testing::random_tensor(DType::kFloat32, {1, 2, 3, 3, 3}, 1, -1.0f, 1.0f)}};
  const testing::Tol tol{kRtol, kAtol};
  testing::expect_gpu_matches_cpu(text, in, "convt_3d", &tol);
  if (!testing::gpu_present()) return;
  auto g = testing::import_text(text, "gpu_convt_3d_x");
  int fallbacks = -1;
  testing::run_executor(*g, in, nullptr, &fallbacks);
  EXPECT_EQ(fallbacks, 1);
}

}  // namespace
}  // namespace kiln
