// Convolutions through cuDNN's graph (backend) API, forced with KILN_CONV_TACTICS=graph,
// against the CPU reference. The models go the way real ones do: fp32 ONNX built at
// precision fp16, which the optimizer turns into channels-last fp16 kiln.FusedConv nodes
// (bias, residual Add and activation fused in).
//
// Tolerances: the CPU computes in fp32 from the fp32 inputs; the GPU rounds x, w, b and z to
// fp16 (relative 2^-11 each), accumulates in float and rounds y once. With values in [-1, 1)
// each of the K = C/g * k * k products is off by at most ~1e-3 of itself, so the sum is off
// by about 1e-3 * sqrt(K) / 3 (one sigma) — atol 2e-3 * sqrt(K) covers six sigma; rtol 2e-3
// covers the final rounding (half an fp16 ulp is 2.4e-4 relative) and the activation.
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "builder/optimize.h"
#include "gpu_test_util.h"

namespace kiln {
namespace {

// Sets KILN_CONV_TACTICS for one test and restores it after.
class ScopedConvTactics {
 public:
  explicit ScopedConvTactics(const char* value) {
    if (const char* old = std::getenv(kVar)) {
      had_ = true;
      old_ = old;
    }
    setenv(kVar, value, 1);
  }
  ~ScopedConvTactics() {
    if (had_) {
      setenv(kVar, old_.c_str(), 1);
    } else {
      unsetenv(kVar);
    }
  }

 private:
  static constexpr const char* kVar = "KILN_CONV_TACTICS";
  bool had_ = false;
  std::string old_;
};

struct GraphCase {
  const char* name;
  int64_t n, c, h, w, m, k, stride, pad, group;
  bool residual;
  const char* act;  // "Relu" or "Silu" (x * Sigmoid(x), which the fusion pass turns into Silu)
};

void PrintTo(const GraphCase& c, std::ostream* os) {
  *os << c.name;
}

int64_t out_dim(const GraphCase& gc, int64_t in) {
  return (in + 2 * gc.pad - gc.k) / gc.stride + 1;
}

std::string model_text(const GraphCase& gc, const Tensor& w, const Tensor& b) {
  const std::string ys = fmt::format("{},{},{},{}", gc.n, gc.m, out_dim(gc, gc.h), out_dim(gc, gc.w));
  const std::string sum = gc.residual ? "s = Add(c, z)" : "s = Identity(c)";
  const std::string act = std::string(gc.act) == "Silu" ? "g = Sigmoid(s)\n y = Mul(s, g)" : "y = Relu(s)";
  return fmt::format(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[{},{},{},{}] x{}) => (float[?,?,?,?] y) <{}, {}> {{
      c = Conv <group = {}, strides = [{},{}], pads = [{},{},{},{}]> (x, w, b)
      {}
      {}
    }})",
                     gc.n, gc.c, gc.h, gc.w, gc.residual ? ", float[" + ys + "] z" : "",
                     testing::initializer("w", w), testing::initializer("b", b), gc.group, gc.stride,
                     gc.stride, gc.pad, gc.pad, gc.pad, gc.pad, sum, act);
}

std::map<std::string, Tensor> case_inputs(const GraphCase& gc) {
  std::map<std::string, Tensor> in = {
      {"x", testing::random_tensor(DType::kFloat32, {gc.n, gc.c, gc.h, gc.w}, 1)}};
  if (gc.residual) {
    in["z"] = testing::random_tensor(DType::kFloat32, {gc.n, gc.m, out_dim(gc, gc.h), out_dim(gc, gc.w)}, 4);
  }
  return in;
}

// Runs the model; on the GPU at precision fp16 with the given timing cache, and returns each
// convolution layer's tactic in `conv_tactics`.
std::vector<Tensor> run_model(const std::string& path, const std::string& backend, const std::string& cache,
                              const std::map<std::string, Tensor>& in,
                              std::vector<std::string>* conv_tactics) {
  SessionOptions o;
  o.backend = backend;
  if (backend == "cuda") o.precision = "fp16";
  o.timing_cache_path = cache;
  std::unique_ptr<Session> s;
  Status st = Session::load(path, o, &s);
  EXPECT_TRUE(st.ok()) << st.to_string();
  if (!st.ok()) return {};
  std::vector<Tensor> out;
  st = s->run(in, &out);
  EXPECT_TRUE(st.ok()) << st.to_string();
  if (conv_tactics) {
    std::vector<LayerTime> layers;
    st = s->profile(in, 1, &layers);
    EXPECT_TRUE(st.ok()) << st.to_string();
    for (const LayerTime& l : layers) {
      if (l.op_type == "FusedConv" || l.op_type == "Conv") conv_tactics->push_back(l.tactic);
    }
  }
  return out;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& t : v) s += "  " + t + "\n";
  return s;
}

void expect_all_contain(const std::vector<std::string>& tactics, const std::string& what) {
  ASSERT_FALSE(tactics.empty()) << "no convolution layer on the GPU";
  for (const auto& t : tactics)
    EXPECT_NE(t.find(what), std::string::npos) << "expected '" << what << "' in:\n" << joined(tactics);
}

class GpuGraphConv : public ::testing::TestWithParam<GraphCase> {};

TEST_P(GpuGraphConv, Fp16NhwcMatchesCpu) {
  KILN_SKIP_WITHOUT_GPU();
  const GraphCase& gc = GetParam();
  ScopedConvTactics graph("graph");
  const Tensor w = testing::random_tensor(DType::kFloat32, {gc.m, gc.c / gc.group, gc.k, gc.k}, 2);
  const Tensor b = testing::random_tensor(DType::kFloat32, {gc.m}, 3);
  const std::string path =
      testing::write_text_model(model_text(gc, w, b), std::string("gpu_graphconv_") + gc.name);
  const auto in = case_inputs(gc);
  const std::vector<Tensor> want = run_model(path, "cpu", "none", in, nullptr);
  std::vector<std::string> tactics;
  const std::vector<Tensor> got = run_model(path, "cuda", "none", in, &tactics);
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(want.size(), 1u);
  const double k = static_cast<double>(gc.c / gc.group * gc.k * gc.k);
  testing::expect_close(got[0], want[0], 2e-3, 2e-3 * std::sqrt(k), gc.name);
  // A failure here means cuDNN offered no graph plan for this shape (the layer fell back to
  // the legacy API, which is harmless but not what this test is about).
  expect_all_contain(tactics, "cudnn graph");
  std::printf("%s", joined(tactics).c_str());
}

// The models above become what the graph path is for: one channels-last fp16 FusedConv with
// the bias, residual and activation inside (no GPU needed to check that).
TEST_P(GpuGraphConv, OptimizesToOneFp16NhwcFusedConv) {
  const GraphCase& gc = GetParam();
  const Tensor w = testing::random_tensor(DType::kFloat32, {gc.m, gc.c / gc.group, gc.k, gc.k}, 2);
  const Tensor b = testing::random_tensor(DType::kFloat32, {gc.m}, 3);
  auto g = testing::import_text(model_text(gc, w, b), std::string("gpu_graphconv_opt_") + gc.name);
  ASSERT_TRUE(g);
  builder::OptimizeOptions o;
  o.backend = "cuda";
  o.precision = "fp16";
  const Status st = builder::optimize_graph(*g, o);
  ASSERT_TRUE(st.ok()) << st.to_string();
  int convs = 0;
  for (const auto& n : g->nodes()) {
    EXPECT_NE(n->op_type, "Conv");
    if (n->op_type != "FusedConv") continue;
    ++convs;
    EXPECT_EQ(n->attr_i("channels_last", 0), 1);
    EXPECT_EQ(n->input(0)->type.dtype, DType::kFloat16);
    EXPECT_EQ(n->input(3) != nullptr, gc.residual);
    EXPECT_EQ(n->attr_s("activation", ""), gc.act);
  }
  EXPECT_EQ(convs, 1);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, GpuGraphConv,
    ::testing::Values(GraphCase{"bias_relu", 1, 16, 14, 14, 32, 3, 1, 1, 1, false, "Relu"},
                      GraphCase{"bias_residual_relu", 2, 16, 14, 14, 16, 3, 1, 1, 1, true, "Relu"},
                      GraphCase{"strided", 1, 16, 15, 15, 32, 3, 2, 1, 1, false, "Relu"},
                      GraphCase{"pointwise_residual", 2, 32, 7, 7, 64, 1, 1, 0, 1, true, "Relu"},
                      GraphCase{"grouped", 1, 32, 10, 10, 32, 3, 1, 1, 4, false, "Relu"},
                      GraphCase{"depthwise", 1, 32, 12, 12, 32, 3, 2, 1, 32, false, "Relu"},
                      GraphCase{"silu_residual", 1, 16, 9, 9, 16, 3, 1, 1, 1, true, "Silu"}),
    [](const ::testing::TestParamInfo<GraphCase>& i) { return std::string(i.param.name); });

const GraphCase kResidual{"cache", 2, 16, 14, 14, 16, 3, 1, 1, 1, true, "Relu"};

// A rebuild with the timing cache takes the same graph plan without timing it, and gives
// bit-identical results (nondeterministic engines are excluded).
TEST(GpuGraphConvCache, RebuildTakesTheCachedPlan) {
  KILN_SKIP_WITHOUT_GPU();
  ScopedConvTactics graph("graph");
  const Tensor w = testing::random_tensor(DType::kFloat32, {16, 16, 3, 3}, 2);
  const Tensor b = testing::random_tensor(DType::kFloat32, {16}, 3);
  const std::string path = testing::write_text_model(model_text(kResidual, w, b), "gpu_graphconv_cache");
  const std::string cache = ::testing::TempDir() + "kiln_graph_conv_cache.json";
  std::remove(cache.c_str());
  const auto in = case_inputs(kResidual);
  std::vector<std::string> first, second;
  const std::vector<Tensor> a = run_model(path, "cuda", cache, in, &first);
  const std::vector<Tensor> r = run_model(path, "cuda", cache, in, &second);
  expect_all_contain(first, "cudnn graph");
  expect_all_contain(second, "from the timing cache");
  ASSERT_EQ(first.size(), second.size());
  for (size_t i = 0; i < first.size(); ++i) {
    // Same engine: the text up to the time is the same.
    EXPECT_EQ(first[i].substr(0, first[i].find(" ws ")), second[i].substr(0, second[i].find(" ws ")));
  }
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(r.size(), 1u);
  testing::expect_close(r[0], a[0], 0, 0, "cached rebuild");
  std::remove(cache.c_str());
}

// KILN_CONV_TACTICS=legacy keeps every conv on the legacy API; the default times both
// families, and either result is within the same tolerance.
TEST(GpuGraphConvFamilies, LegacyForcedAndDefault) {
  KILN_SKIP_WITHOUT_GPU();
  const Tensor w = testing::random_tensor(DType::kFloat32, {16, 16, 3, 3}, 2);
  const Tensor b = testing::random_tensor(DType::kFloat32, {16}, 3);
  const std::string path = testing::write_text_model(model_text(kResidual, w, b), "gpu_graphconv_families");
  const auto in = case_inputs(kResidual);
  const std::vector<Tensor> want = run_model(path, "cpu", "none", in, nullptr);
  for (const char* families : {"legacy", "all"}) {
    ScopedConvTactics set(families);
    std::vector<std::string> tactics;
    const std::vector<Tensor> got = run_model(path, "cuda", "none", in, &tactics);
    ASSERT_EQ(got.size(), 1u);
    testing::expect_close(got[0], want[0], 2e-3, 2e-3 * std::sqrt(16.0 * 9), families);
    if (std::string(families) == "legacy") expect_all_contain(tactics, "cudnn conv algo");
    std::printf("%s:\n%s", families, joined(tactics).c_str());
  }
}

}  // namespace
}  // namespace kiln
