// What the GPU planner must plan (runtime/shape_plan.h): comparisons with bool outputs, graph
// outputs that are constants, shapes given as graph inputs (shape tensors: the plan is keyed on
// their values and rebuilt when they change), and If with a condition known at plan time.
#include <fmt/format.h>

#include <cmath>

#include "gpu_test_util.h"

namespace kiln {
namespace {

Tensor int64s(std::vector<int64_t> v) {
  Tensor t(DType::kInt64, {static_cast<int64_t>(v.size())});
  std::copy(v.begin(), v.end(), t.data_as<int64_t>());
  return t;
}

// Bool outputs once failed at launch ("invalid device function"): every compare op, each dtype
// the GPU layer takes, contiguous (vectorized and tail) and broadcast.
TEST(GpuPlan, ComparisonsWithBoolOutputs) {
  KILN_SKIP_WITHOUT_GPU();
  for (const char* op : {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"}) {
    for (const char* type : {"float", "int32", "int64", "float16"}) {
      const std::string text = fmt::format(R"(
        <ir_version: 8, opset_import: ["" : 17]>
        g ({0}[3,37] a, {0}[3,37] b, {0}[1,37] c) => (bool[3,37] y, bool[3,37] z, bool[3,37] n) {{
          y = {1} (a, b)
          z = {1} (a, c)
          n = Not (y)
        }})", type, op);
      const DType t = std::string(type) == "float" ? DType::kFloat32 : std::string(type) == "int32" ? DType::kInt32
                      : std::string(type) == "int64" ? DType::kInt64 : DType::kFloat16;
      // Values in {-2..2} so that equal elements occur.
      auto small = [&](std::vector<int64_t> shape, uint32_t seed) {
        Tensor f = testing::random_tensor(DType::kFloat32, shape, seed);
        for (int64_t i = 0; i < f.numel(); ++i) f.data_as<float>()[i] = std::round(f.data_as<float>()[i] * 2);
        return f.to(t);
      };
      const std::map<std::string, Tensor> in = {{"a", small({3, 37}, 1)}, {"b", small({3, 37}, 2)}, {"c", small({1, 37}, 3)}};
      testing::expect_backends_agree(text, fmt::format("gpu_cmp_{}_{}", op, type), in, 0, 0, 0);
    }
  }
}

TEST(GpuPlan, ConstantGraphOutput) {
  KILN_SKIP_WITHOUT_GPU();
  const char* text = R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y, float[3] c) {
      y = Relu (x)
      c = Constant <value = float[3] {1, 2, 3}> ()
    })";
  for (int level : {0, 2}) {
    testing::expect_backends_agree(text, "gpu_const_out" + std::to_string(level),
                                   {{"x", testing::random_tensor(DType::kFloat32, {2}, 1)}}, 0, 0, level);
  }
  // No input at all: the whole graph is a constant.
  testing::expect_backends_agree(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g () => (float[3] c) { c = Constant <value = float[3] {1, 2, 3}> () })", "gpu_const_only", {}, 0, 0, 2);
}

// Reshape's shape and TopK's k as graph inputs: the plan follows their values.
TEST(GpuPlan, ShapeTensorInputsRebuildThePlan) {
  KILN_SKIP_WITHOUT_GPU();
  const std::string path = testing::write_text_model(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[12] x, int64[2] s, int64[1] k) => (float[a, b] y, float[a, c] v, int64[a, c] i) {
      y = Reshape (x, s)
      v, i = TopK (y, k)
    })", "gpu_shape_tensors");
  SessionOptions cpu_opt, cuda_opt;
  cpu_opt.backend = "cpu";
  cuda_opt.backend = "cuda";
  std::unique_ptr<Session> cpu, cuda;
  ASSERT_TRUE(Session::load(path, cpu_opt, &cpu).ok());
  ASSERT_TRUE(Session::load(path, cuda_opt, &cuda).ok());
  const Tensor x = testing::random_tensor(DType::kFloat32, {12}, 7);
  for (auto [s, k] : std::vector<std::pair<std::vector<int64_t>, int64_t>>{{{3, 4}, 2}, {{2, 6}, 2}, {{3, 4}, 3}, {{3, 4}, 2}}) {
    const std::map<std::string, Tensor> in = {{"x", x}, {"s", int64s(s)}, {"k", int64s({k})}};
    std::vector<Tensor> want, got;
    ASSERT_TRUE(cpu->run(in, &want).ok());
    const Status st = cuda->run(in, &got);
    ASSERT_TRUE(st.ok()) << st.to_string();
    ASSERT_EQ(got.size(), want.size());
    for (size_t o = 0; o < got.size(); ++o) testing::expect_close(got[o], want[o], 0, 0, "output " + std::to_string(o));
  }
}

// Integer ids that only index data are not shape tensors: one plan serves all their values.
TEST(GpuPlan, DataIntegerInputsKeepOnePlan) {
  KILN_SKIP_WITHOUT_GPU();
  auto g = testing::import_text(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[10, 4] e, int64[3] ids) => (float[3, 4] y) { y = Gather (e, ids) })", "gpu_ids");
  runtime::GpuExecutorOptions opt;
  std::unique_ptr<runtime::GpuExecutor> ex;
  ASSERT_TRUE(runtime::GpuExecutor::create(*g, opt, &ex).ok());
  const Tensor e = testing::random_tensor(DType::kFloat32, {10, 4}, 3);
  std::vector<Tensor> out;
  ASSERT_TRUE(ex->run({{"e", e}, {"ids", int64s({1, 2, 3})}}, &out).ok());
  const runtime::GpuInstance* first = ex->last_instance();
  ASSERT_TRUE(ex->run({{"e", e}, {"ids", int64s({9, 0, 4})}}, &out).ok());
  EXPECT_EQ(ex->last_instance(), first);
  EXPECT_EQ(out[0].data_as<float>()[0], e.data_as<float>()[36]);
}

// y = If(c) <Relu(x) | Neg(x)>, c computed by `cond` from the second input `second`.
std::string if_model(const std::string& second, const std::string& cond) {
  return fmt::format(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[4] x, {}) => (float[4] y) {{
      {}
      y = If (c) <then_branch = g1 () => (float[4] t) {{ t = Relu (x) }},
                  else_branch = g2 () => (float[4] e) {{ e = Neg (x) }}>
    }})", second, cond);
}

// A condition from a shape-tensor input: the taken branch runs inline on the GPU. From tensor
// data: the If runs through the host fallback (both branches give float[4]).
TEST(GpuPlan, IfWithConditionKnownAtPlanTimeOrNot) {
  KILN_SKIP_WITHOUT_GPU();
  const std::string known = if_model("int64[1] sr", "k = Constant <value = int64[1] {16000}> () c = Equal (sr, k)");
  const std::string data = if_model("float[1] f", "z = Constant <value = float[1] {0}> () c = Greater (f, z)");
  const Tensor x = testing::random_tensor(DType::kFloat32, {4}, 1);
  for (int64_t sr : {16000, 8000}) {
    testing::expect_backends_agree(known, "gpu_if_" + std::to_string(sr), {{"x", x}, {"sr", int64s({sr})}}, 0, 0, 0);
  }
  for (float f : {1.0f, -1.0f}) {
    Tensor ft(DType::kFloat32, {1});
    ft.data_as<float>()[0] = f;
    testing::expect_backends_agree(data, "gpu_if_host", {{"x", x}, {"f", ft}}, 0, 0, 0);
  }
}

}  // namespace
}  // namespace kiln
