// Shape and data-movement ops: behaviour the ONNX conformance tests do not pin down — older
// opset attribute forms, static shape inference through shape arithmetic, ops without
// conformance data here (DepthToSpace, SpaceToDepth, Trilu), dtypes, and clear errors.
#include <gtest/gtest.h>

#include <map>
#include <memory>

#include "onnx/importer.h"
#include "op_test_util.h"
#include "runtime/shape_inference.h"

namespace kiln {
namespace {

using namespace testing;  // op_test_util.h

std::string test_stem() {
  return std::string("tensor_") + ::testing::UnitTest::GetInstance()->current_test_info()->name();
}

// Loads a text-format model and runs it; the Status says why loading or running failed.
Status run_model(const std::string& text, const std::map<std::string, Tensor>& inputs,
                 std::vector<Tensor>* outputs) {
  return testing::run_model(text, test_stem(), inputs, outputs);
}

// The statically inferred type of the model's output `i`, as text ("float32[N,3]").
std::string static_output_type(const std::string& text, size_t i = 0) {
  std::unique_ptr<ir::Graph> g;
  Status st = onnx_io::import_model_file(testing::write_text_model(text, test_stem()), &g);
  if (st.ok()) st = runtime::infer_graph_types(*g);
  if (!st.ok()) return "error: " + st.message();
  return g->outputs.at(i)->type.to_string();
}

TEST(TensorSlice, Opset9AttributesBecomeInputs) {
  std::vector<Tensor> out;
  ASSERT_TRUE(run_model(R"(
    <ir_version: 4, opset_import: ["" : 9]>
    g (float[2,4] x) => (float[1,3] y) { y = Slice<starts = [0, 1], ends = [1, 1000], axes = [0, 1]>(x) }
  )",
                        {{"x", make<float>({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8})}}, &out)
                  .ok());
  EXPECT_EQ(out[0].shape(), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(values<float>(out[0]), (std::vector<float>{2, 3, 4}));
}

TEST(TensorSlice, NegativeStepClampsToTheEnds) {
  std::vector<Tensor> out;
  ASSERT_TRUE(run_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (int8[6] x) => (int8[3] y) <int64[1] s = {-1}, int64[1] e = {-1000}, int64[1] a = {0}, int64[1] st = {-2}> {
      y = Slice(x, s, e, a, st)
    }
  )",
                        {{"x", make<int8_t>({6}, {0, 1, 2, 3, 4, 5})}}, &out)
                  .ok());
  EXPECT_EQ(values<int8_t>(out[0]), (std::vector<int8_t>{5, 3, 1}));
}

TEST(TensorSlice, ZeroStepIsAnError) {
  const std::string type = static_output_type(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[4] x) => (float[4] y) <int64[1] s = {0}, int64[1] e = {4}, int64[1] a = {0}, int64[1] st = {0}> {
      y = Slice(x, s, e, a, st)
    }
  )");
  EXPECT_NE(type.find("step must not be 0"), std::string::npos) << type;
}

TEST(TensorSplit, Opset11SplitAttribute) {
  std::vector<Tensor> out;
  ASSERT_TRUE(run_model(R"(
    <ir_version: 6, opset_import: ["" : 11]>
    g (int64[4] x) => (int64[1] a, int64[3] b) { a, b = Split<split = [1, 3]>(x) }
  )",
                        {{"x", make<int64_t>({4}, {10, 11, 12, 13})}}, &out)
                  .ok());
  EXPECT_EQ(values<int64_t>(out[0]), (std::vector<int64_t>{10}));
  EXPECT_EQ(values<int64_t>(out[1]), (std::vector<int64_t>{11, 12, 13}));
}

TEST(TensorSplit, NumOutputsGivesSmallerLastChunk) {
  std::vector<Tensor> out;
  ASSERT_TRUE(run_model(R"(
    <ir_version: 8, opset_import: ["" : 18]>
    g (bool[2,7] x) => (bool[2,3] a, bool[2,3] b, bool[2,1] c) { a, b, c = Split<axis = 1, num_outputs = 3>(x) }
  )",
                        {{"x", make<bool>({2, 7}, {1, 0, 0, 1, 1, 0, 1, 0, 1, 1, 0, 0, 1, 0})}}, &out)
                  .ok());
  EXPECT_EQ(out[0].shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(out[2].shape(), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(values<bool>(out[1]), (std::vector<bool>{1, 1, 0, 0, 0, 1}));
  EXPECT_EQ(values<bool>(out[2]), (std::vector<bool>{1, 0}));
}

TEST(TensorSplit, UnevenSplitWithoutSizesIsAnError) {
  const std::string type = static_output_type(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[5] x) => (float[2] a, float[3] b) { a, b = Split(x) }
  )");
  EXPECT_NE(type.find("evenly"), std::string::npos) << type;
}

TEST(TensorPad, Opset10AttributesBecomeInputs) {
  std::vector<Tensor> out;
  ASSERT_TRUE(run_model(R"(
    <ir_version: 5, opset_import: ["" : 10]>
    g (double[1,2] x) => (double[1,4] y) { y = Pad<pads = [0, 1, 0, 1], value = 7.5>(x) }
  )",
                        {{"x", make<double>({1, 2}, {1, 2})}}, &out)
                  .ok());
  EXPECT_EQ(values<double>(out[0]), (std::vector<double>{7.5, 1, 2, 7.5}));
}

TEST(TensorPad, ReflectEdgeWrapAndNegativePads) {
  const std::map<std::string, std::vector<int32_t>> expected = {
      {"reflect", {3, 2, 1, 2, 3, 2, 1}}, {"edge", {1, 1, 1, 2, 3, 3, 3}}, {"wrap", {2, 3, 1, 2, 3, 1, 2}}};
  for (const auto& [mode, want] : expected) {
    std::vector<Tensor> out;
    ASSERT_TRUE(run_model(R"(
      <ir_version: 8, opset_import: ["" : 19]>
      g (int32[3] x) => (int32[7] y) <int64[2] p = {2, 2}> { y = Pad<mode = ")" +
                              mode + R"(">(x, p) }
    )",
                          {{"x", make<int32_t>({3}, {1, 2, 3})}}, &out)
                    .ok())
        << mode;
    EXPECT_EQ(values<int32_t>(out[0]), want) << mode;
  }
  std::vector<Tensor> out;
  ASSERT_TRUE(run_model(R"(
    <ir_version: 8, opset_import: ["" : 18]>
    g (uint16[2,3] x) => (uint16[2,3] y) <int64[2] p = {-1, 1}, uint16 v = {9}, int64[1] a = {-1}> { y = Pad(x, p, v, a) }
  )",
                        {{"x", make<uint16_t>({2, 3}, {1, 2, 3, 4, 5, 6})}}, &out)
                  .ok());
  EXPECT_EQ(values<uint16_t>(out[0]), (std::vector<uint16_t>{2, 3, 9, 5, 6, 9}));
}

TEST(TensorPad, UnknownModeIsUnsupported) {
  const std::string type = static_output_type(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[3] x) => (float[5] y) <int64[2] p = {1, 1}> { y = Pad<mode = "mirror">(x, p) }
  )");
  EXPECT_NE(type.find("mirror"), std::string::npos) << type;
}

TEST(TensorSqueeze, Opset11AxesAttributes) {
  std::vector<Tensor> out;
  ASSERT_TRUE(run_model(R"(
    <ir_version: 6, opset_import: ["" : 11]>
    g (float[1,3,1] x) => (float[3,1,1] y) {
      s = Squeeze<axes = [0, -1]>(x)
      y = Unsqueeze<axes = [2, 1]>(s)
    }
  )",
                        {{"x", make<float>({1, 3, 1}, {1, 2, 3})}}, &out)
                  .ok());
  EXPECT_EQ(out[0].shape(), (std::vector<int64_t>{3, 1, 1}));
}

TEST(TensorSqueeze, NonUnitAxisIsAnError) {
  const std::string type = static_output_type(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2,3] x) => (float[3] y) <int64[1] a = {0}> { y = Squeeze(x, a) }
  )");
  EXPECT_NE(type.find("cannot squeeze"), std::string::npos) << type;
}

// Shape -> Concat -> Reshape must resolve at import time, keeping the symbolic batch dim.
TEST(TensorShapeInference, ShapeArithmeticResolvesStatically) {
  EXPECT_EQ(static_output_type(R"(
    <ir_version: 8, opset_import: ["" : 15]>
    g (float[N,3,4] x, float[N,12] z) => (float[N,3,4] y) <int64[1] m = {-1}> {
      s = Shape<start = 1>(x)
      t = Concat<axis = 0>(m, s)
      y = Reshape(z, t)
    }
  )"),
            "float32[N,3,4]");
}

TEST(TensorShapeInference, UnknownValuesGiveUnknownShapesNotErrors) {
  // Target shapes from graph inputs: only the rank (from the shape input's length) is known.
  EXPECT_EQ(static_output_type(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2,6] x, int64[3] s) => (float[a,b,c] y) { y = Reshape(x, s) }
  )"),
            "float32[?,?,?]");
  EXPECT_EQ(static_output_type(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[3,1] x, int64[2] s) => (float[a,b] y) { y = Expand(x, s) }
  )"),
            "float32[3,?]");
  EXPECT_EQ(static_output_type(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[4,5] x, int64[1] s, int64[1] e) => (float[a,b] y) <int64[1] a = {1}> { y = Slice(x, s, e, a) }
  )"),
            "float32[4,?]");
}

TEST(TensorReshape, TwoMinusOnesIsAnError) {
  const std::string type = static_output_type(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2,6] x) => (float[3,4] y) <int64[2] s = {-1, -1}> { y = Reshape(x, s) }
  )");
  EXPECT_NE(type.find("more than one -1"), std::string::npos) << type;
}

TEST(TensorReshape, Opset1ShapeAttributeAndZeroCopy) {
  std::vector<Tensor> out;
  const Tensor x = make<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  ASSERT_TRUE(run_model(R"(
    <ir_version: 3, opset_import: ["" : 1]>
    g (float[2,3] x) => (float[3,2] y) { y = Reshape<shape = [3, -1]>(x) }
  )",
                        {{"x", x}}, &out)
                  .ok());
  EXPECT_EQ(out[0].shape(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(values<float>(out[0]), values<float>(x));
}

// The example of the ONNX operator documentation: x = 0..47 as [1,8,2,3], blocksize 2.
TEST(TensorDepthToSpace, DcrAndCrdModes) {
  std::vector<float> x(48);
  for (int i = 0; i < 48; ++i) x[i] = static_cast<float>(i);
  for (const char* mode : {"DCR", "CRD"}) {
    std::vector<Tensor> out;
    ASSERT_TRUE(run_model(std::string(R"(
      <ir_version: 8, opset_import: ["" : 13]>
      g (float[1,8,2,3] x) => (float[1,2,4,6] y, float[1,8,2,3] z) {
        y = DepthToSpace<blocksize = 2, mode = ")") +
                              mode + R"(">(x)
        z = SpaceToDepth<blocksize = 2>(y)
      }
    )",
                          {{"x", make<float>({1, 8, 2, 3}, x)}}, &out)
                    .ok())
        << mode;
    const std::vector<float> y = values<float>(out[0]);
    const std::vector<float> first_row(y.begin(), y.begin() + 6);
    if (std::string(mode) == "DCR") {
      EXPECT_EQ(first_row, (std::vector<float>{0, 12, 1, 13, 2, 14}));
      EXPECT_EQ(values<float>(out[1]), x);  // SpaceToDepth inverts DCR
    } else {
      EXPECT_EQ(first_row, (std::vector<float>{0, 6, 1, 7, 2, 8}));
    }
  }
}

TEST(TensorTrilu, UpperLowerAndDiagonalOffset) {
  const Tensor x = make<int64_t>({2, 3}, {1, 2, 3, 4, 5, 6});
  struct Case {
    int upper;
    int64_t k;
    std::vector<int64_t> want;
  };
  for (const Case& c :
       {Case{1, 0, {1, 2, 3, 0, 5, 6}}, Case{1, 1, {0, 2, 3, 0, 0, 6}}, Case{0, 0, {1, 0, 0, 4, 5, 0}},
        Case{0, -1, {0, 0, 0, 4, 0, 0}}, Case{1, -5, {1, 2, 3, 4, 5, 6}}}) {
    std::vector<Tensor> out;
    ASSERT_TRUE(run_model(R"(
      <ir_version: 8, opset_import: ["" : 14]>
      g (int64[2,3] x, int64 k) => (int64[2,3] y) { y = Trilu<upper = )" +
                              std::to_string(c.upper) + R"(>(x, k) }
    )",
                          {{"x", x}, {"k", make<int64_t>({}, {c.k})}}, &out)
                    .ok());
    EXPECT_EQ(values<int64_t>(out[0]), c.want) << "upper " << c.upper << " k " << c.k;
  }
}

TEST(TensorDropout, TrainingScalesKeptElements) {
  std::vector<float> x(1000, 3.0f);
  std::vector<Tensor> out;
  ASSERT_TRUE(run_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1000] x) => (float[1000] y, bool[1000] m) <float r = {0.75}, bool t = {1}> { y, m = Dropout(x, r, t) }
  )",
                        {{"x", make<float>({1000}, x)}}, &out)
                  .ok());
  const auto y = values<float>(out[0]);
  const auto m = values<bool>(out[1]);
  int kept = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    EXPECT_EQ(y[i], m[i] ? 12.0f : 0.0f);
    kept += m[i];
  }
  EXPECT_GT(kept, 150);
  EXPECT_LT(kept, 350);
}

TEST(TensorDropout, Opset7MaskHasTheDataType) {
  std::vector<Tensor> out;
  ASSERT_TRUE(run_model(R"(
    <ir_version: 3, opset_import: ["" : 7]>
    g (float[2] x) => (float[2] y, float[2] m) { y, m = Dropout<ratio = 0.3>(x) }
  )",
                        {{"x", make<float>({2}, {1, 2})}}, &out)
                  .ok());
  EXPECT_EQ(values<float>(out[0]), (std::vector<float>{1, 2}));
  EXPECT_EQ(values<float>(out[1]), (std::vector<float>{1, 1}));
}

TEST(TensorRange, FloatIntAndZeroDelta) {
  std::vector<Tensor> out;
  ASSERT_TRUE(run_model(R"(
    <ir_version: 8, opset_import: ["" : 11]>
    g (double a, double b, double c, int16 d, int16 e, int16 f) => (double[4] y, int16[3] z) {
      y = Range(a, b, c)
      z = Range(d, e, f)
    }
  )",
                        {{"a", make<double>({}, {1})},
                         {"b", make<double>({}, {2})},
                         {"c", make<double>({}, {0.3})},
                         {"d", make<int16_t>({}, {10})},
                         {"e", make<int16_t>({}, {3})},
                         {"f", make<int16_t>({}, {-3})}},
                        &out)
                  .ok());
  const auto y = values<double>(out[0]);
  ASSERT_EQ(y.size(), 4u);
  EXPECT_DOUBLE_EQ(y[3], 1.9);
  EXPECT_EQ(values<int16_t>(out[1]), (std::vector<int16_t>{10, 7, 4}));
  const std::string type = static_output_type(R"(
    <ir_version: 8, opset_import: ["" : 11]>
    g () => (int32[a] y) <int32 a = {0}, int32 b = {5}, int32 c = {0}> { y = Range(a, b, c) }
  )");
  EXPECT_NE(type.find("delta must not be 0"), std::string::npos) << type;
}

TEST(TensorLayout, TransposeTileExpandOnSeveralElementSizes) {
  std::vector<Tensor> out;
  ASSERT_TRUE(run_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float16[2,3] x, uint8[2,1] u) => (float16[3,2] t, uint8[4,3] r, uint8[2,2,3] e)
      <int64[2] reps = {2, 3}, int64[3] s = {2, 1, 3}> {
      t = Transpose(x)
      r = Tile(u, reps)
      e = Expand(u, s)
    }
  )",
                        {{"x", make<float16>({2, 3}, {float16(1), float16(2), float16(3), float16(4),
                                                      float16(5), float16(6)})},
                         {"u", make<uint8_t>({2, 1}, {7, 8})}},
                        &out)
                  .ok());
  std::vector<float> t;
  for (float16 h : values<float16>(out[0])) t.push_back(static_cast<float>(h));
  EXPECT_EQ(t, (std::vector<float>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(values<uint8_t>(out[1]), (std::vector<uint8_t>{7, 7, 7, 8, 8, 8, 7, 7, 7, 8, 8, 8}));
  EXPECT_EQ(values<uint8_t>(out[2]), (std::vector<uint8_t>{7, 7, 7, 8, 8, 8, 7, 7, 7, 8, 8, 8}));
}

}  // namespace
}  // namespace kiln
