// Resize behaviour the conformance tests do not pin down: the opset 10 form, Upsample (opset 7
// attribute scales, opset 9 input) rewritten into Resize, integer and bool inputs, output
// size arithmetic, and errors for bad attributes or inputs.
#include "ops/resize.h"

#include <gtest/gtest.h>

#include "op_test_util.h"

namespace kiln {
namespace {

using namespace testing;  // op_test_util.h

const Tensor kX = make<float>({1, 1, 2, 2}, {1, 2, 3, 4});

TEST(Resize, Opset10TakesScalesAsSecondInput) {
  const char* model = R"(
    <ir_version: 5, opset_import: ["" : 10]>
    g (float[1,1,2,2] x) => (float[1,1,2,4] y) {
      s = Constant<value = float[4] {1.0, 1.0, 1.0, 2.0}>()
      y = Resize<mode = "nearest">(x, s)
    })";
  std::vector<Tensor> outs;
  ASSERT_TRUE(run_model(model, "resize10", {{"x", kX}}, &outs).ok());
  EXPECT_EQ(values<float>(outs[0]), (std::vector<float>{1, 1, 2, 2, 3, 3, 4, 4}));
}

TEST(Resize, Opset10LinearIsAsymmetric) {
  const char* model = R"(
    <ir_version: 5, opset_import: ["" : 10]>
    g (float[1,1,2,2] x) => (float[1,1,2,4] y) {
      s = Constant<value = float[4] {1.0, 1.0, 1.0, 2.0}>()
      y = Resize<mode = "linear">(x, s)
    })";
  std::vector<Tensor> outs;
  ASSERT_TRUE(run_model(model, "resize10_linear", {{"x", kX}}, &outs).ok());
  EXPECT_EQ(values<float>(outs[0]), (std::vector<float>{1, 1.5f, 2, 2, 3, 3.5f, 4, 4}));
}

TEST(Resize, Upsample7AttributeScales) {
  const char* model = R"(
    <ir_version: 3, opset_import: ["" : 7]>
    g (float[1,1,2,2] x) => (float[1,1,4,2] y) {
      y = Upsample<mode = "nearest", scales = [1.0, 1.0, 2.0, 1.0]>(x)
    })";
  std::vector<Tensor> outs;
  ASSERT_TRUE(run_model(model, "upsample7", {{"x", kX}}, &outs).ok());
  EXPECT_EQ(outs[0].shape(), (std::vector<int64_t>{1, 1, 4, 2}));
  EXPECT_EQ(values<float>(outs[0]), (std::vector<float>{1, 2, 1, 2, 3, 4, 3, 4}));
}

TEST(Resize, Upsample9ScalesInput) {
  const char* model = R"(
    <ir_version: 4, opset_import: ["" : 9]>
    g (int32[1,1,2,2] x, float[4] s) => (int32[1,1,2,6] y) {
      y = Upsample<mode = "nearest">(x, s)
    })";
  std::vector<Tensor> outs;
  ASSERT_TRUE(run_model(model, "upsample9",
                        {{"x", make<int32_t>({1, 1, 2, 2}, {1, 2, 3, 4})},
                         {"s", make<float>({4}, {1, 1, 1, 3})}},
                        &outs)
                  .ok());
  EXPECT_EQ(values<int32_t>(outs[0]), (std::vector<int32_t>{1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4}));
}

TEST(Resize, LinearOnIntegersTruncatesLikeTheReference) {
  Tensor x = make<uint8_t>({1, 2}, {0, 255});
  Tensor y;
  ASSERT_TRUE(run_op("Resize", 13,
                     {{"mode", string_attr("linear")},
                      {"coordinate_transformation_mode", string_attr("align_corners")}},
                     {x, Tensor(), Tensor(), make<int64_t>({2}, {1, 3})}, &y)
                  .ok());
  EXPECT_EQ(values<uint8_t>(y), (std::vector<uint8_t>{0, 127, 255}));
}

TEST(Resize, NearestCopiesBool) {
  Tensor x = make<bool>({2}, {true, false});
  Tensor y;
  ASSERT_TRUE(run_op("Resize", 19, {}, {x, Tensor(), make<float>({1}, {2}), Tensor()}, &y).ok());
  EXPECT_EQ(values<bool>(y), (std::vector<bool>{true, true, false, false}));
}

TEST(Resize, OutputSizeFloorsInFloat) {
  std::vector<ops::ResizeDim> dims;
  ir::Node node;
  Tensor scales = make<float>({2}, {0.7f, 0.6f});
  ASSERT_TRUE(ops::plan_resize(node, {10, 4}, nullptr, &scales, nullptr, &dims).ok());
  EXPECT_EQ(dims[0].out, 7);
  EXPECT_EQ(dims[1].out, 2);
}

TEST(Resize, KeepAspectRatioPolicies) {
  std::vector<ops::ResizeDim> dims;
  ir::Node node;
  node.attrs["keep_aspect_ratio_policy"] = string_attr("not_larger");
  Tensor sizes = make<int64_t>({2}, {3, 3});
  // Without axes, sizes must name every dim.
  EXPECT_FALSE(ops::plan_resize(node, {1, 1, 2, 4}, nullptr, nullptr, &sizes, &dims).ok());
  node.attrs["axes"].kind = ir::Attribute::Kind::kInts;
  node.attrs["axes"].ints = {2, 3};
  ASSERT_TRUE(ops::plan_resize(node, {1, 1, 2, 4}, nullptr, nullptr, &sizes, &dims).ok());
  EXPECT_EQ(dims[2].out, 2);  // scale min(3/2, 3/4) = 0.75: 1.5 rounds half up to 2
  EXPECT_EQ(dims[3].out, 3);
  node.attrs["keep_aspect_ratio_policy"] = string_attr("not_smaller");
  ASSERT_TRUE(ops::plan_resize(node, {1, 1, 2, 4}, nullptr, nullptr, &sizes, &dims).ok());
  EXPECT_EQ(dims[2].out, 3);
  EXPECT_EQ(dims[3].out, 6);
}

TEST(Resize, ScalesAndSizesTogetherAreAnError) {
  Tensor y;
  Status s = run_op("Resize", 13, {},
                    {kX, Tensor(), make<float>({4}, {1, 1, 2, 2}), make<int64_t>({4}, {1, 1, 4, 4})}, &y);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  s = run_op("Resize", 13, {}, {kX, Tensor(), make<float>({3}, {1, 2, 2}), Tensor()}, &y);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
}

TEST(Resize, UnknownModeIsUnsupported) {
  const char* model = R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,1,2,2] x, float[4] s) => (float[1,1,4,4] y) {
      y = Resize<mode = "area">(x, , s)
    })";
  std::vector<Tensor> outs;
  EXPECT_EQ(run_model(model, "resize_bad_mode", {{"x", kX}}, &outs).code(), StatusCode::kUnsupported);
}

TEST(Resize, CropAndResizeExtrapolates) {
  Tensor x = make<float>({1, 3}, {10, 20, 30});
  Tensor roi = make<float>({4}, {0, 0.5f, 1, 1.5f});
  Tensor y;
  ASSERT_TRUE(run_op("Resize", 13,
                     {{"mode", string_attr("linear")},
                      {"coordinate_transformation_mode", string_attr("tf_crop_and_resize")},
                      {"extrapolation_value", testing::float_attr(-1)}},
                     {x, roi, Tensor(), make<int64_t>({2}, {1, 3})}, &y)
                  .ok());
  EXPECT_EQ(values<float>(y), (std::vector<float>{20, 30, -1}));
}

}  // namespace
}  // namespace kiln
