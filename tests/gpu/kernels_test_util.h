// Helpers for the GPU kernel tests: a one-node ONNX text model run through kiln::Session on the
// "cuda" and "cpu" backends with the same random inputs, outputs compared elementwise.
#pragma once
#include <gtest/gtest.h>
#include <kiln/kiln.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gpu_test_util.h"
#include "test_models.h"

namespace kiln::testing {

// Without a GPU the kernel tests skip, unless KILN_GPU_TESTS_CPU_ONLY=1: then they run their
// CPU half alone, which checks the test models themselves on a machine without a GPU.
inline bool cpu_only_mode() {
  const char* v = std::getenv("KILN_GPU_TESTS_CPU_ONLY");
  return !gpu_present() && v != nullptr && std::string(v) == "1";
}

#define KILN_KERNEL_TEST_START()                                                              \
  do {                                                                                        \
    if (!::kiln::testing::gpu_present() && !::kiln::testing::cpu_only_mode())                 \
      GTEST_SKIP() << "no GPU on this machine";                                               \
  } while (0)

// Random values in [lo, hi] (rounded for integer types, non-zero-biased for bool), as dtype t.
inline Tensor random_tensor(DType t, const std::vector<int64_t>& shape, uint32_t seed, float lo = -3.0f,
                            float hi = 3.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  Tensor f(DType::kFloat32, shape);
  for (int64_t i = 0; i < f.numel(); ++i) {
    float v = u(rng);
    if (t == DType::kBool) v = v > (lo + hi) / 2 ? 1.0f : 0.0f;
    else if (dtype_is_integer(t)) v = std::round(v);
    f.data_as<float>()[i] = v;
  }
  return t == DType::kFloat32 ? f : f.to(t);
}

// Tolerances, |gpu - cpu| <= atol + rtol * |cpu|. fp32 kernels follow the CPU formulas in float;
// transcendental functions (expf, erff, tanhf...) and float-vs-double accumulation differ by
// about an ulp, so 1e-5 relative; fp16/bf16 compute in float on both backends and round once,
// except where the CPU rounds intermediates (reductions, chains): 1e-3 / 1e-2 relative.
struct Tol {
  double rtol = 1e-5, atol = 1e-6;
};
inline Tol tol_for(DType t) {
  if (t == DType::kFloat16) return {2e-3, 2e-3};
  if (t == DType::kBFloat16) return {1.6e-2, 1.6e-2};
  if (dtype_is_float(t)) return {1e-5, 1e-6};
  return {0, 0};  // integers and bool: exact
}

// Level 0 by default: the op as written, not a fused rewrite of it.
inline std::unique_ptr<Session> load_session(const std::string& path, const std::string& backend, int level = 0) {
  SessionOptions o;
  o.backend = backend;
  o.optimization_level = level;
  std::unique_ptr<Session> s;
  const Status st = Session::load(path, o, &s);
  EXPECT_TRUE(st.ok()) << backend << ": " << st.to_string();
  return s;
}

// Runs `text` on both backends with `inputs`; expects equal output shapes and values within
// `tol` (of the output's dtype when not given).
inline void expect_gpu_matches_cpu(const std::string& text, const std::map<std::string, Tensor>& inputs,
                                   const std::string& stem, const Tol* tol = nullptr, int level = 0) {
  const std::string path = write_text_model(text, "gpu_" + stem);
  auto cpu = load_session(path, "cpu", level);
  if (cpu_only_mode()) {
    std::vector<Tensor> want;
    const Status st = cpu ? cpu->run(inputs, &want) : Status(StatusCode::kInternal, "no session");
    EXPECT_TRUE(st.ok()) << stem << " cpu: " << st.to_string();
    return;
  }
  auto gpu = load_session(path, "cuda", level);
  if (!cpu || !gpu) return;
  std::vector<Tensor> want, got;
  Status st = cpu->run(inputs, &want);
  ASSERT_TRUE(st.ok()) << "cpu: " << st.to_string();
  st = gpu->run(inputs, &got);
  ASSERT_TRUE(st.ok()) << "cuda: " << st.to_string();
  ASSERT_EQ(want.size(), got.size());
  for (size_t k = 0; k < want.size(); ++k) {
    ASSERT_EQ(want[k].dtype(), got[k].dtype()) << stem << " output " << k;
    ASSERT_EQ(want[k].shape(), got[k].shape()) << stem << " output " << k;
    const Tol t = tol != nullptr ? *tol : tol_for(want[k].dtype());
    const Tensor a = want[k].to(DType::kFloat64), b = got[k].to(DType::kFloat64);
    int bad = 0;
    for (int64_t i = 0; i < a.numel() && bad < 5; ++i) {
      const double x = a.data_as<double>()[i], y = b.data_as<double>()[i];
      const bool same = (std::isnan(x) && std::isnan(y)) || x == y || std::fabs(x - y) <= t.atol + t.rtol * std::fabs(x);
      if (!same) {
        ++bad;
        ADD_FAILURE() << stem << " output " << k << " element " << i << ": cpu " << x << " cuda " << y;
      }
    }
  }
}

// "float[2,3]"-style type text of a dtype and shape for the ONNX text format.
inline std::string type_text(DType t, const std::vector<int64_t>& shape) {
  static const std::map<DType, std::string> kNames = {
      {DType::kFloat32, "float"}, {DType::kFloat16, "float16"}, {DType::kBFloat16, "bfloat16"},
      {DType::kFloat64, "double"}, {DType::kInt8, "int8"},      {DType::kUInt8, "uint8"},
      {DType::kInt32, "int32"},   {DType::kInt64, "int64"},     {DType::kBool, "bool"},
      {DType::kFloat8E4M3FN, "float8e4m3fn"}};
  std::string s = kNames.at(t) + "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

// The element type's name alone ("float"): an output declared without a shape.
inline std::string elem_text(DType t) {
  const std::string s = type_text(t, {});
  return s.substr(0, s.find('['));
}

// A graph input: name, dtype, shape.
struct In {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
};

// One-node model text: `node` is the node line ("y = Add(a, b)"), outputs are given as typed
// text ("float[2,3] y" or "float y" for an unknown shape), initializers as "<...>" text.
inline std::string model_text(const std::vector<In>& ins, const std::string& outputs, const std::string& node,
                              int opset = 18, const std::string& initializers = "") {
  std::string s = "<ir_version: 8, opset_import: [\"\" : " + std::to_string(opset) + ", \"kiln\" : 1]>\ng (";
  for (size_t i = 0; i < ins.size(); ++i) s += (i ? ", " : "") + type_text(ins[i].dtype, ins[i].shape) + " " + ins[i].name;
  s += ") => (" + outputs + ") " + initializers + " {\n  " + node + "\n}";
  return s;
}

// Random inputs for `ins` (seeded by position).
inline std::map<std::string, Tensor> random_inputs(const std::vector<In>& ins, uint32_t seed = 1, float lo = -3.0f,
                                                   float hi = 3.0f) {
  std::map<std::string, Tensor> m;
  for (size_t i = 0; i < ins.size(); ++i) m[ins[i].name] = random_tensor(ins[i].dtype, ins[i].shape, seed + 17 * i, lo, hi);
  return m;
}

}  // namespace kiln::testing
