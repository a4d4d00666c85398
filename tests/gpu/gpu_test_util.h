// Helpers for GPU tests: skip without a GPU, run a text model through the CPU and the CUDA
// backends and report the elements that differ, and reach the executor to check which layers
// were used.
#pragma once
#include <gtest/gtest.h>
#include <fmt/format.h>
#include <kiln/kiln.h>

#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backends/gpu/device.h"
#include "ir/graph.h"
#include "onnx/importer.h"
#include "runtime/gpu_executor.h"
#include "runtime/shape_inference.h"
#include "test_models.h"

namespace kiln::testing {

inline bool gpu_present() {
  static const bool present = gpu::device_count() > 0;
  return present;
}

#define KILN_SKIP_WITHOUT_GPU()                                                    \
  do {                                                                             \
    if (!::kiln::testing::gpu_present()) GTEST_SKIP() << "no GPU on this machine"; \
  } while (0)

// Deterministic values in [-1, 1) (a different stream per seed), converted to `t`.
inline Tensor random_tensor(DType t, std::vector<int64_t> shape, uint32_t seed) {
  Tensor f(DType::kFloat32, std::move(shape));
  uint32_t s = seed * 2654435761u + 12345u;
  for (int64_t i = 0; i < f.numel(); ++i) {
    s = s * 1664525u + 1013904223u;
    f.data_as<float>()[i] = static_cast<float>(s >> 8) / static_cast<float>(1u << 23) - 1.0f;
  }
  return f.to(t);
}

// Compares element by element (in float); prints the first differences and the worst one.
inline void expect_close(const Tensor& got, const Tensor& want, double rtol, double atol, const std::string& what) {
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_EQ(got.shape(), want.shape()) << what << ": shape " << shape_to_string(got.shape()) << " vs "
                                       << shape_to_string(want.shape());
  const Tensor g = got.to(DType::kFloat32), w = want.to(DType::kFloat32);
  int bad = 0;
  double worst = 0;
  int64_t worst_i = -1;
  for (int64_t i = 0; i < g.numel(); ++i) {
    const double a = g.data_as<float>()[i], b = w.data_as<float>()[i];
    const double err = std::fabs(a - b), allowed = atol + rtol * std::fabs(b);
    if (!(err <= allowed)) {
      if (bad < 5) ADD_FAILURE() << what << ": element " << i << " gpu " << a << " cpu " << b << " (|diff| " << err << " > " << allowed << ")";
      ++bad;
    }
    if (err > worst || std::isnan(err)) {
      worst = err;
      worst_i = i;
    }
  }
  if (bad) ADD_FAILURE() << what << ": " << bad << " of " << g.numel() << " elements differ; worst |diff| " << worst << " at " << worst_i;
}

inline std::vector<Tensor> run_session(const std::string& path, SessionOptions opt,
                                       const std::map<std::string, Tensor>& inputs) {
  std::unique_ptr<Session> s;
  const Status st = Session::load(path, opt, &s);
  EXPECT_TRUE(st.ok()) << opt.backend << ": " << st.to_string();
  if (!st.ok()) return {};
  EXPECT_EQ(s->backend(), opt.backend);
  std::vector<Tensor> out;
  const Status rs = s->run(inputs, &out);
  EXPECT_TRUE(rs.ok()) << opt.backend << ": " << rs.to_string();
  return out;
}

// Runs `text` on the CPU and through CUDA (optimization level `level` for both) and compares.
inline void expect_backends_agree(const std::string& text, const std::string& stem,
                                  const std::map<std::string, Tensor>& inputs, double rtol, double atol,
                                  int level = 2, const std::string& precision = "fp32") {
  const std::string path = write_text_model(text, stem);
  SessionOptions cpu, cuda;
  cpu.backend = "cpu";
  cuda.backend = "cuda";
  cpu.optimization_level = cuda.optimization_level = level;
  cuda.precision = precision;
  const std::vector<Tensor> want = run_session(path, cpu, inputs);
  const std::vector<Tensor> got = run_session(path, cuda, inputs);
  ASSERT_EQ(got.size(), want.size()) << stem;
  for (size_t i = 0; i < got.size(); ++i) expect_close(got[i], want[i], rtol, atol, stem + " output " + std::to_string(i));
}

// The graph of a text model as imported (no optimizer), with types inferred.
inline std::unique_ptr<ir::Graph> import_text(const std::string& text, const std::string& stem) {
  std::unique_ptr<ir::Graph> g;
  const Status st = onnx_io::import_model_file(write_text_model(text, stem), &g);
  EXPECT_TRUE(st.ok()) << st.to_string();
  if (g) {
    EXPECT_TRUE(runtime::infer_graph_types(*g).ok());
  }
  return g;
}

// Runs the imported graph through the GPU executor; `layers` gets the instance's description.
// `cache` (may be null) shares tactic choices between executors, so two builds of one graph
// pick the same algorithms.
inline std::vector<Tensor> run_executor(const ir::Graph& g, const std::map<std::string, Tensor>& inputs,
                                        std::string* layers, int* fallbacks, bool use_graph = true, int runs = 1,
                                        runtime::TacticCache* cache = nullptr) {
  runtime::GpuExecutorOptions opt;
  opt.instance.use_cuda_graph = use_graph;
  opt.instance.layer.cache = cache;
  std::unique_ptr<runtime::GpuExecutor> ex;
  Status st = runtime::GpuExecutor::create(g, opt, &ex);
  EXPECT_TRUE(st.ok()) << st.to_string();
  if (!st.ok()) return {};
  std::vector<Tensor> out;
  for (int r = 0; r < runs; ++r) {
    st = ex->run(inputs, &out);
    EXPECT_TRUE(st.ok()) << st.to_string();
  }
  if (layers) *layers = ex->last_instance() ? ex->last_instance()->describe() : "";
  if (fallbacks) *fallbacks = ex->last_instance() ? ex->last_instance()->fallback_count() : -1;
  return out;
}

}  // namespace kiln::testing

namespace kiln::testing {

// "float[2,3] name = {v, v, ...}": an initializer in ONNX text, from a tensor.
inline std::string initializer(const std::string& name, const Tensor& t) {
  const Tensor f = t.to(DType::kFloat32);
  std::string dims, vals;
  for (size_t i = 0; i < t.shape().size(); ++i) dims += (i ? "," : "") + std::to_string(t.shape()[i]);
  for (int64_t i = 0; i < f.numel(); ++i) vals += (i ? ", " : "") + std::to_string(f.data_as<float>()[i]);
  const char* type = t.dtype() == DType::kFloat16 ? "float16" : t.dtype() == DType::kBFloat16 ? "bfloat16" : "float";
  return std::string(type) + "[" + dims + "] " + name + " = {" + vals + "}";
}

// conv-relu-pool-conv-add-relu-pool-gemm-softmax with seeded weights and a dynamic batch.
inline std::string small_cnn() {
  const Tensor w1 = testing::random_tensor(DType::kFloat32, {8, 3, 3, 3}, 11);
  const Tensor b1 = testing::random_tensor(DType::kFloat32, {8}, 12);
  const Tensor w2 = testing::random_tensor(DType::kFloat32, {8, 8, 3, 3}, 13);
  const Tensor b2 = testing::random_tensor(DType::kFloat32, {8}, 14);
  const Tensor wf = testing::random_tensor(DType::kFloat32, {10, 8}, 15);
  const Tensor bf = testing::random_tensor(DType::kFloat32, {10}, 16);
  return fmt::format(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    cnn (float[N,3,16,16] x) => (float[N,10] y) <{}, {}, {}, {}, {}, {}> {{
      c1 = Conv <pads = [1,1,1,1]> (x, w1, b1)
      r1 = Relu (c1)
      p1 = MaxPool <kernel_shape = [2,2], strides = [2,2]> (r1)
      c2 = Conv <pads = [1,1,1,1]> (p1, w2, b2)
      s = Add (c2, p1)
      r2 = Relu (s)
      g = GlobalAveragePool (r2)
      f = Flatten (g)
      l = Gemm <transB = 1> (f, wf, bf)
      y = Softmax <axis = 1> (l)
    }})",
                     testing::initializer("w1", w1), testing::initializer("b1", b1), testing::initializer("w2", w2),
                     testing::initializer("b2", b2), testing::initializer("wf", wf), testing::initializer("bf", bf));
}

}  // namespace kiln::testing
