// The GPU executor through the public Session: a small CNN end to end, CUDA graph replay,
// the host fallback, per-shape plans, and the errors a machine without a GPU gets.
#include <fmt/format.h>

#include "gpu_test_util.h"

namespace kiln {
namespace {

constexpr double kRtol = 1e-4, kAtol = 1e-5;  // fp32 strict, see conv_test.cpp

using testing::small_cnn;

TEST(GpuSession, SmallCnnMatchesCpuAtEveryLevel) {
  KILN_SKIP_WITHOUT_GPU();
  const std::map<std::string, Tensor> in = {{"x", testing::random_tensor(DType::kFloat32, {2, 3, 16, 16}, 1)}};
  for (int level : {0, 2}) testing::expect_backends_agree(small_cnn(), "gpu_cnn_O" + std::to_string(level), in, kRtol, kAtol, level);
}

TEST(GpuSession, CudaGraphReplayEqualsEagerRun) {
  KILN_SKIP_WITHOUT_GPU();
  auto g = testing::import_text(small_cnn(), "gpu_cnn_graph");
  const std::map<std::string, Tensor> in = {{"x", testing::random_tensor(DType::kFloat32, {3, 3, 16, 16}, 2)}};
  std::string layers_graph, layers_eager;
  int fb = -1;
  // Bit-identical only with the same algorithms: the second build takes the first's tactics
  // (timings alone can pick differently, e.g. under compute-sanitizer).
  runtime::TacticCache tactics;
  const auto replay = testing::run_executor(*g, in, &layers_graph, &fb, true, 3, &tactics);
  const auto eager = testing::run_executor(*g, in, &layers_eager, &fb, false, 1, &tactics);
  EXPECT_NE(layers_graph.find("CUDA graph: captured"), std::string::npos) << layers_graph;
  EXPECT_NE(layers_eager.find("CUDA graph: off"), std::string::npos) << layers_eager;
  ASSERT_EQ(replay.size(), 1u);
  ASSERT_EQ(eager.size(), 1u);
  testing::expect_close(replay[0], eager[0], 0, 0, "graph replay vs eager");
  std::printf("%s", layers_graph.c_str());
}

TEST(GpuSession, OpWithoutGpuLayerRunsOnTheHost) {
  KILN_SKIP_WITHOUT_GPU();
  const char* text = R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[3,5] x) => (float[3,5] y) <int64 axis = {1}> {
      r = Relu (x)
      c = CumSum (r, axis)
      y = Neg (c)
    })";
  const std::map<std::string, Tensor> in = {{"x", testing::random_tensor(DType::kFloat32, {3, 5}, 1)}};
  testing::expect_backends_agree(text, "gpu_fallback", in, kRtol, kAtol, 0);
  auto g = testing::import_text(text, "gpu_fallback_x");
  std::string layers;
  int fallbacks = -1;
  testing::run_executor(*g, in, &layers, &fallbacks, true, 2);
  EXPECT_EQ(fallbacks, 1) << layers;
  EXPECT_NE(layers.find("cpu-fallback"), std::string::npos) << layers;
  EXPECT_NE(layers.find("CUDA graph: off"), std::string::npos) << layers;
}

TEST(GpuSession, EachInputShapeGetsItsOwnPlan) {
  KILN_SKIP_WITHOUT_GPU();
  const Tensor w = testing::random_tensor(DType::kFloat32, {4, 3}, 2);
  const std::string text = fmt::format(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[N,4] x) => (float[N,3] y) <{}> {{
      m = MatMul (x, w)
      y = Relu (m)
    }})",
                                       testing::initializer("w", w));
  const std::string path = testing::write_text_model(text, "gpu_dynamic_batch");
  SessionOptions cpu_opt, cuda_opt;
  cpu_opt.backend = "cpu";
  cuda_opt.backend = "cuda";
  std::unique_ptr<Session> cpu, cuda;
  ASSERT_TRUE(Session::load(path, cpu_opt, &cpu).ok());
  ASSERT_TRUE(Session::load(path, cuda_opt, &cuda).ok());
  for (int64_t n : {1, 5, 1, 2, 5}) {
    const std::map<std::string, Tensor> in = {{"x", testing::random_tensor(DType::kFloat32, {n, 4}, static_cast<uint32_t>(n))}};
    std::vector<Tensor> want, got;
    ASSERT_TRUE(cpu->run(in, &want).ok());
    const Status st = cuda->run(in, &got);
    ASSERT_TRUE(st.ok()) << st.to_string();
    testing::expect_close(got[0], want[0], kRtol, kAtol, "batch " + std::to_string(n));
  }
  std::vector<Tensor> out;
  const Status bad = cuda->run({{"x", testing::random_tensor(DType::kFloat32, {2, 5}, 1)}}, &out);
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument) << bad.to_string();
}

TEST(GpuSession, OptionsAreChecked) {
  KILN_SKIP_WITHOUT_GPU();
  SessionOptions opt;
  opt.backend = "cuda";
  opt.precision = "fp64";
  std::unique_ptr<Session> s;
  const Status st = Session::load(testing::write_text_model(small_cnn(), "gpu_bad_precision"), opt, &s);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.to_string();
  EXPECT_NE(st.message().find("fp64"), std::string::npos) << st.message();
}

// Runs on machines without a GPU (CI): asking for CUDA there is one clear line, and "auto"
// quietly picks the CPU.
TEST(GpuSessionWithoutGpu, CudaIsAOneLineErrorAndAutoPicksCpu) {
  if (testing::gpu_present()) GTEST_SKIP() << "this machine has a GPU";
  const std::string path = testing::write_text_model(small_cnn(), "gpu_no_gpu");
  SessionOptions opt;
  opt.backend = "cuda";
  std::unique_ptr<Session> s;
  const Status st = Session::load(path, opt, &s);
  EXPECT_EQ(st.code(), StatusCode::kUnsupported) << st.to_string();
  EXPECT_EQ(st.to_string().find('\n'), std::string::npos) << st.to_string();
  EXPECT_NE(st.message().find("no usable GPU"), std::string::npos) << st.message();
  opt.backend = "auto";
  ASSERT_TRUE(Session::load(path, opt, &s).ok());
  EXPECT_EQ(s->backend(), "cpu");
}

}  // namespace
}  // namespace kiln
