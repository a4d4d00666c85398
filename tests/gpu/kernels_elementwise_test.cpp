// GPU elementwise kernels vs the CPU backend: unary and binary ops over fp32/fp16/bf16 (and
// int32/int64 where ONNX allows), broadcasting, scalar operands, odd and empty sizes, Cast,
// Clip, Where, logic ops. Tolerances: see tol_for in kernels_test_util.h.
#include "kernels_test_util.h"

namespace kiln::testing {
namespace {

const DType kFloats[] = {DType::kFloat32, DType::kFloat16, DType::kBFloat16};
const std::vector<std::vector<int64_t>> kShapes = {{0}, {7}, {2, 3, 37}, {1025}, {4, 1, 8, 8}};

std::string shape_tag(const std::vector<int64_t>& s) {
  std::string t;
  for (int64_t d : s) t += "_" + std::to_string(d);
  return t;
}

void unary_case(const std::string& op, DType t, const std::vector<int64_t>& shape, const std::string& attrs = "",
                float lo = -3.0f, float hi = 3.0f, int opset = 18) {
  const std::vector<In> ins = {{"x", t, shape}};
  const std::string node = "y = " + op + attrs + "(x)";
  expect_gpu_matches_cpu(model_text(ins, type_text(t, shape) + " y", node, opset), random_inputs(ins, 3, lo, hi),
                         op + "_" + dtype_name(t) + shape_tag(shape));
}

TEST(GpuKernelsElementwise, FloatUnary) {
  KILN_KERNEL_TEST_START();
  const char* ops[] = {"Relu",  "Sigmoid", "Tanh", "Exp",      "Erf",      "Floor",    "Ceil", "Abs",
                       "Neg",   "Softplus", "HardSwish", "Sin", "Cos", "Softsign", "Round"};
  for (DType t : kFloats) {
    for (const auto& shape : kShapes) {
      for (const char* op : ops) unary_case(op, t, shape);
      for (const char* op : {"Log", "Sqrt", "Reciprocal"}) unary_case(op, t, shape, "", 0.1f, 5.0f);
    }
  }
}

TEST(GpuKernelsElementwise, UnaryWithAttributes) {
  KILN_KERNEL_TEST_START();
  for (DType t : kFloats) {
    const std::vector<int64_t> shape = {3, 65};
    unary_case("LeakyRelu", t, shape, "<alpha = 0.2>");
    unary_case("Elu", t, shape, "<alpha = 0.7>");
    unary_case("Selu", t, shape);
    unary_case("Celu", t, shape, "<alpha = 1.5>");
    unary_case("HardSigmoid", t, shape, "<alpha = 0.3, beta = 0.4>");
    unary_case("ThresholdedRelu", t, shape, "<alpha = 0.5>");
    unary_case("Gelu", t, shape, "", -3.0f, 3.0f, 20);
    unary_case("Gelu", t, shape, "<approximate = \"tanh\">", -3.0f, 3.0f, 20);
  }
}

TEST(GpuKernelsElementwise, IntegerUnary) {
  KILN_KERNEL_TEST_START();
  for (DType t : {DType::kInt32, DType::kInt64}) {
    for (const char* op : {"Relu", "Abs", "Neg", "Sign"}) unary_case(op, t, {5, 13}, "", -50, 50);
  }
}

void binary_case(const std::string& op, DType t, const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                 float lo = -3.0f, float hi = 3.0f, DType out = DType::kUndefined) {
  const std::vector<In> ins = {{"a", t, a}, {"b", t, b}};
  expect_gpu_matches_cpu(model_text(ins, elem_text(out == DType::kUndefined ? t : out) + " y", "y = " + op + "(a, b)"),
                         random_inputs(ins, 5, lo, hi), op + "_" + dtype_name(t) + shape_tag(a) + "_x" + shape_tag(b));
}

// Same shape, scalar on either side, trailing-row, general broadcasting on both sides, empty.
const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> kPairs = {
    {{4, 33}, {4, 33}}, {{4, 33}, {}},      {{}, {4, 33}},       {{4, 33}, {33}},
    {{2, 1, 5}, {3, 1}}, {{2, 3, 4, 5}, {3, 1, 1}}, {{1000, 3}, {1, 3}}, {{0, 3}, {3}}};

TEST(GpuKernelsElementwise, Arithmetic) {
  KILN_KERNEL_TEST_START();
  for (DType t : {DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kInt32, DType::kInt64}) {
    for (const auto& [a, b] : kPairs) {
      for (const char* op : {"Add", "Sub", "Mul", "Div", "Max", "Min"}) binary_case(op, t, a, b, -20, 20);
    }
  }
  for (DType t : kFloats) binary_case("Pow", t, {4, 33}, {33}, 0.1f, 3.0f);
}

TEST(GpuKernelsElementwise, ComparisonsGiveBool) {
  KILN_KERNEL_TEST_START();
  for (DType t : {DType::kFloat32, DType::kFloat16, DType::kInt32, DType::kInt64}) {
    for (const auto& [a, b] : kPairs) {
      for (const char* op : {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"}) {
        binary_case(op, t, a, b, -3, 3, DType::kBool);
      }
    }
  }
}

TEST(GpuKernelsElementwise, Logic) {
  KILN_KERNEL_TEST_START();
  for (const auto& [a, b] : kPairs) {
    for (const char* op : {"And", "Or", "Xor"}) binary_case(op, DType::kBool, a, b);
  }
  unary_case("Not", DType::kBool, {3, 17});
}

TEST(GpuKernelsElementwise, PReluSlopePerChannel) {
  KILN_KERNEL_TEST_START();
  for (DType t : kFloats) {
    const std::vector<In> ins = {{"x", t, {2, 3, 4, 5}}, {"s", t, {3, 1, 1}}};
    expect_gpu_matches_cpu(model_text(ins, type_text(t, {2, 3, 4, 5}) + " y", "y = PRelu(x, s)"), random_inputs(ins),
                           std::string("prelu_") + dtype_name(t));
  }
}

TEST(GpuKernelsElementwise, ClipWithConstantBounds) {
  KILN_KERNEL_TEST_START();
  for (DType t : {DType::kFloat32, DType::kInt32}) {
    const std::string scalar = elem_text(t);
    const std::vector<In> ins = {{"x", t, {6, 11}}};
    const std::string inits = "<" + scalar + " lo = {-1}, " + scalar + " hi = {2}>";
    expect_gpu_matches_cpu(model_text(ins, type_text(t, {6, 11}) + " y", "y = Clip(x, lo, hi)", 18, inits),
                           random_inputs(ins), std::string("clip_") + dtype_name(t));
    expect_gpu_matches_cpu(model_text(ins, type_text(t, {6, 11}) + " y", "y = Clip(x, , hi)", 18, inits),
                           random_inputs(ins), std::string("clip_max_only_") + dtype_name(t));
  }
}

TEST(GpuKernelsElementwise, Cast) {
  KILN_KERNEL_TEST_START();
  const std::pair<DType, DType> pairs[] = {
      {DType::kFloat32, DType::kFloat16}, {DType::kFloat16, DType::kFloat32}, {DType::kFloat32, DType::kBFloat16},
      {DType::kBFloat16, DType::kFloat16}, {DType::kFloat32, DType::kInt32},  {DType::kInt64, DType::kFloat32},
      {DType::kInt32, DType::kInt64},     {DType::kFloat32, DType::kBool},    {DType::kBool, DType::kFloat32},
      {DType::kInt64, DType::kInt8},      {DType::kUInt8, DType::kFloat16},   {DType::kFloat64, DType::kFloat32}};
  for (const auto& [from, to] : pairs) {
    for (const auto& shape : kShapes) {
      const std::vector<In> ins = {{"x", from, shape}};
      const std::string node = "y = Cast<to = " + std::to_string(dtype_to_onnx(to)) + ">(x)";
      expect_gpu_matches_cpu(model_text(ins, type_text(to, shape) + " y", node), random_inputs(ins, 9, 0.0f, 100.0f),
                             std::string("cast_") + dtype_name(from) + "_" + dtype_name(to) + shape_tag(shape));
    }
  }
}

TEST(GpuKernelsElementwise, WhereBroadcasts) {
  KILN_KERNEL_TEST_START();
  for (DType t : {DType::kFloat32, DType::kFloat16, DType::kInt64}) {
    const std::vector<In> ins = {{"c", DType::kBool, {2, 1, 7}}, {"x", t, {3, 7}}, {"z", t, {}}};
    expect_gpu_matches_cpu(model_text(ins, type_text(t, {2, 3, 7}) + " y", "y = Where(c, x, z)"), random_inputs(ins),
                           std::string("where_") + dtype_name(t));
  }
}

}  // namespace
}  // namespace kiln::testing
