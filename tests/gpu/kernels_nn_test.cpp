// GPU pooling, normalization and FusedElementwise kernels vs the CPU backend. fp32 within 1e-5
// relative (float vs double accumulation in the CPU's averages, softmax and norms), fp16/bf16
// within their tol_for bounds (one rounding of a float result on both sides).
#include "kernels_test_util.h"

namespace kiln::testing {
namespace {

const DType kFloats[] = {DType::kFloat32, DType::kFloat16, DType::kBFloat16};

void run_case(const std::vector<In>& ins, DType out, const std::string& node, const std::string& stem, int opset = 18,
              const std::string& inits = "", int level = 0) {
  expect_gpu_matches_cpu(model_text(ins, elem_text(out) + " y", node, opset, inits), random_inputs(ins), stem, nullptr,
                         level);
}

TEST(GpuKernelsPool, WindowedChannelsFirst) {
  KILN_KERNEL_TEST_START();
  const std::string pools[] = {
      "MaxPool<kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]>",
      "MaxPool<kernel_shape = [2, 2], ceil_mode = 1, strides = [2, 2]>",
      "MaxPool<kernel_shape = [3, 3], dilations = [2, 2]>",
      "AveragePool<kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]>",
      "AveragePool<kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1], count_include_pad = 1>",
      "AveragePool<kernel_shape = [2, 3], auto_pad = \"SAME_UPPER\">",
      "AveragePool<kernel_shape = [3, 3], ceil_mode = 1, strides = [2, 2]>"};
  for (DType t : kFloats) {
    int k = 0;
    for (const std::string& p : pools) {
      const std::vector<In> ins = {{"x", t, {2, 3, 13, 11}}};
      run_case(ins, t, "y = " + p + "(x)", "pool" + std::to_string(k++) + "_" + dtype_name(t));
    }
    run_case({{"x", t, {2, 4, 17}}}, t, "y = MaxPool<kernel_shape = [3], strides = [2]>(x)", std::string("pool1d_") + dtype_name(t));
    run_case({{"x", t, {1, 2, 5, 6, 7}}}, t, "y = AveragePool<kernel_shape = [2, 2, 2]>(x)", std::string("pool3d_") + dtype_name(t));
  }
}

TEST(GpuKernelsPool, Global) {
  KILN_KERNEL_TEST_START();
  for (DType t : kFloats) {
    for (const std::vector<int64_t>& s : {std::vector<int64_t>{2, 2048, 7, 7}, {1, 3, 224, 224}, {3, 5, 1, 1}, {2, 4, 9}}) {
      for (const char* op : {"GlobalAveragePool", "GlobalMaxPool"}) {
        run_case({{"x", t, s}}, t, std::string("y = ") + op + "(x)",
                 std::string(op) + "_" + dtype_name(t) + "_" + std::to_string(s[1]) + "_" + std::to_string(s[2]));
      }
    }
  }
}

// kiln.ChannelsLastPool: (N, H, W, C); C = 16 takes the 16-byte-over-C path, C = 3 the scalar one.
TEST(GpuKernelsPool, ChannelsLast) {
  KILN_KERNEL_TEST_START();
  const std::string pools[] = {
      "mode = \"MaxPool\", kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]",
      "mode = \"AveragePool\", kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1], count_include_pad = 1",
      "mode = \"AveragePool\", kernel_shape = [2, 2], ceil_mode = 1, strides = [2, 2]",
      "mode = \"GlobalAveragePool\"", "mode = \"GlobalMaxPool\""};
  for (DType t : kFloats) {
    for (int64_t c : {16, 3}) {
      int k = 0;
      for (const std::string& p : pools) {
        run_case({{"x", t, {2, 13, 11, c}}}, t, "y = kiln.ChannelsLastPool<" + p + ">(x)",
                 "nhwc_pool" + std::to_string(k++) + "_c" + std::to_string(c) + "_" + dtype_name(t));
      }
    }
    // A large plane with few channels (PP-OCR det's squeeze-excitation pools): many rows of
    // threads share each channel's sum.
    run_case({{"x", t, {1, 96, 80, 40}}}, t, "y = kiln.ChannelsLastPool<mode = \"GlobalAveragePool\">(x)",
             std::string("nhwc_gap_large_") + dtype_name(t));
  }
}

TEST(GpuKernelsNorm, SoftmaxAnyAxis) {
  KILN_KERNEL_TEST_START();
  for (DType t : kFloats) {
    for (const char* op : {"Softmax", "LogSoftmax"}) {
      for (int axis : {-1, 1, 0}) {
        for (const std::vector<int64_t>& s : {std::vector<int64_t>{4, 7, 33}, {3, 2000}, {2, 5000, 1}, {0, 5}}) {
          if (axis >= static_cast<int>(s.size())) continue;
          run_case({{"x", t, s}}, t, std::string("y = ") + op + "<axis = " + std::to_string(axis) + ">(x)",
                   std::string(op) + "_" + dtype_name(t) + "_ax" + std::to_string(axis) + "_" + std::to_string(s[1]));
        }
      }
      // Opset 11: the input is flattened to 2-D at axis.
      run_case({{"x", t, {2, 3, 4, 5}}}, t, std::string("y = ") + op + "<axis = 1>(x)",
               std::string(op) + "_opset11_" + dtype_name(t), 11);
    }
  }
}

TEST(GpuKernelsNorm, LayerNormalization) {
  KILN_KERNEL_TEST_START();
  for (DType t : kFloats) {
    for (const std::vector<int64_t>& s : {std::vector<int64_t>{2, 5, 64}, {3, 3000}, {7, 1}}) {
      const int64_t c = s.back();
      const std::vector<In> ins = {{"x", t, s}, {"g", t, {c}}, {"b", t, {c}}};
      run_case(ins, t, "y = LayerNormalization<axis = -1, epsilon = 0.001>(x, g, b)",
               std::string("layernorm_") + dtype_name(t) + "_" + std::to_string(c), 17);
    }
    const std::vector<In> two_axes = {{"x", t, {2, 6, 4, 8}}, {"g", t, {4, 8}}};
    run_case(two_axes, t, "y = LayerNormalization<axis = 2>(x, g)", std::string("layernorm_2axes_") + dtype_name(t), 17);
  }
}

TEST(GpuKernelsNorm, BatchNormalizationInference) {
  KILN_KERNEL_TEST_START();
  const std::string inits =
      "<float[3] s = {1.5, -0.5, 2.0}, float[3] b = {0.1, 0.2, -0.3}, float[3] m = {0.5, -1.0, 0.0}, "
      "float[3] v = {1.0, 0.25, 4.0}>";
  run_case({{"x", DType::kFloat32, {2, 3, 5, 7}}}, DType::kFloat32, "y = BatchNormalization<epsilon = 0.001>(x, s, b, m, v)",
           "batchnorm_f32", 15, inits);
}

// A chain the -O2 pipeline fuses into kiln.FusedElementwise on both backends (when
// fuse_elementwise is enabled): scalar constants, a broadcast bias, Where on a comparison, Cast.
TEST(GpuKernelsFused, ChainsAtO2) {
  KILN_KERNEL_TEST_START();
  const std::string inits = "<float two = {2.0}, float half = {0.5}>";
  const std::string body =
      "m = Mul(x, two)\n  a = Add(m, b)\n  s = Sigmoid(a)\n  c = Greater(a, half)\n  w = Where(c, s, a)\n"
      "  r = Relu(w)\n  y = Tanh(r)";
  for (const std::vector<int64_t>& s : {std::vector<int64_t>{4, 33}, {1, 1}, {0, 33}}) {
    const std::vector<In> ins = {{"x", DType::kFloat32, s}, {"b", DType::kFloat32, {s.back()}}};
    expect_gpu_matches_cpu(model_text(ins, "float y", body, 18, inits), random_inputs(ins),
                           "fused_chain_" + std::to_string(s[0]), nullptr, 2);
  }
  // fp16 ops, float32 result: the CPU reference stores (rounds) a, e and m in fp16, the fused
  // kernel keeps them in float registers and rounds nothing before the Cast. Three roundings
  // of 2^-11 relative each (Erf's slope <= 1.13, |a| and |e| <= ~4 here) bound the difference
  // by ~2e-3 relative; 3e-3 / 1e-3 leaves room without hiding a wrong op.
  const std::vector<In> half_in = {{"x", DType::kFloat16, {3, 5, 8}}, {"b", DType::kFloat16, {5, 1}}};
  const Tol fp16_intermediates{3e-3, 1e-3};
  expect_gpu_matches_cpu(model_text(half_in, "float y",
                                    "a = Add(x, b)\n  e = Erf(a)\n  m = Mul(e, a)\n  y = Cast<to = 1>(m)"),
                         random_inputs(half_in), "fused_half_cast", &fp16_intermediates, 2);
}

// The node written directly (level 0): two inputs broadcast against each other, bool input.
TEST(GpuKernelsFused, DirectNode) {
  KILN_KERNEL_TEST_START();
  const std::string node =
      "y = kiln.FusedElementwise<body = body (float[2,1,5] p, float[3,1] q, bool[3,5] k) => (float r) {\n"
      "    d = Sub(p, q)\n    e = Exp(d)\n    l = LeakyRelu<alpha = 0.1>(d)\n    r = Where(k, e, l)\n  }>(x, z, c)";
  const std::vector<In> ins = {{"x", DType::kFloat32, {2, 1, 5}}, {"z", DType::kFloat32, {3, 1}}, {"c", DType::kBool, {3, 5}}};
  expect_gpu_matches_cpu(model_text(ins, "float y", node), random_inputs(ins), "fused_direct");
}

}  // namespace
}  // namespace kiln::testing
