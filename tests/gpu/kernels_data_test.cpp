// GPU data-movement, reduction, resize and quantization kernels vs the CPU backend. Moves are
// exact; reductions accumulate in float (CPU: double), so fp32 within 1e-5 relative; resize
// weights are float on the GPU (double on the CPU): 1e-5 relative; quantization is exact.
#include <algorithm>

#include "kernels_test_util.h"

namespace kiln::testing {
namespace {

void run_case(const std::vector<In>& ins, DType out, const std::string& node, const std::string& stem,
              const std::string& inits = "", int opset = 18) {
  expect_gpu_matches_cpu(model_text(ins, elem_text(out) + " y", node, opset, inits), random_inputs(ins, 11, -4, 4), stem);
}

TEST(GpuKernelsData, Transpose) {
  KILN_KERNEL_TEST_START();
  const std::pair<std::vector<int64_t>, std::string> cases[] = {
      {{2, 3, 33, 65}, "[0, 2, 3, 1]"}, {{2, 33, 65, 3}, "[0, 3, 1, 2]"}, {{70, 45}, "[1, 0]"},
      {{2, 3, 4, 5}, "[3, 1, 0, 2]"},   {{2, 3, 4}, "[0, 1, 2]"},         {{0, 4}, "[1, 0]"}};
  for (DType t : {DType::kFloat32, DType::kFloat16, DType::kInt64, DType::kBool, DType::kInt8}) {
    int k = 0;
    for (const auto& [s, perm] : cases) {
      run_case({{"x", t, s}}, t, "y = Transpose<perm = " + perm + ">(x)",
               "transpose" + std::to_string(k++) + "_" + dtype_name(t));
    }
  }
}

TEST(GpuKernelsData, SliceConcatPadGather) {
  KILN_KERNEL_TEST_START();
  for (DType t : {DType::kFloat32, DType::kFloat16, DType::kInt64}) {
    const std::string n = dtype_name(t);
    run_case({{"x", t, {5, 8, 9}}}, t, "y = Slice(x, st, en, ax, sp)", "slice_steps_" + n,
             "<int64[3] st = {1, -1, 0}, int64[3] en = {4, 0, 9}, int64[3] ax = {0, 1, 2}, int64[3] sp = {2, -2, 3}>");
    run_case({{"x", t, {5, 8}}}, t, "y = Slice(x, st, en)", "slice_plain_" + n, "<int64[1] st = {1}, int64[1] en = {1000}>");
    run_case({{"a", t, {2, 3, 4}}, {"b", t, {2, 5, 4}}, {"c", t, {2, 0, 4}}}, t, "y = Concat<axis = 1>(a, b, c)",
             "concat_mid_" + n);
    run_case({{"a", t, {3, 7}}, {"b", t, {1, 7}}}, t, "y = Concat<axis = 0>(a, b)", "concat_outer_" + n);
    for (const char* mode : {"constant", "reflect", "edge", "wrap"}) {
      run_case({{"x", t, {2, 3, 5, 6}}}, t, std::string("y = Pad<mode = \"") + mode + "\">(x, p)",
               std::string("pad_") + mode + "_" + n, "<int64[8] p = {0, 0, 1, 2, 0, 1, 3, 2}>", 19);
    }
    // Zeros after the last axis only (channel padding before a tensor-core convolution).
    run_case({{"x", t, {2, 5, 4, 3}}}, t, "y = Pad(x, p)", "pad_last_axis_" + n,
             "<int64[8] p = {0, 0, 0, 0, 0, 0, 0, 5}>");
    if (t != DType::kFloat16) {  // (the text format's float16 literals are not relied on)
      run_case({{"x", t, {4, 6}}}, t, "y = Pad(x, p, v)", "pad_value_" + n,
               "<int64[4] p = {1, -1, 0, 2}, " + elem_text(t) + " v = {7}>");
    }
    for (int axis : {0, 1, -1}) {
      run_case({{"x", t, {4, 5, 6}}}, t, "y = Gather<axis = " + std::to_string(axis) + ">(x, i)",
               "gather_ax" + std::to_string(axis) + "_" + n, "<int64[2,2] i = {0, -1, 2, 3}>");
    }
    run_case({{"x", t, {3, 1, 4}}}, t, "y = Expand(x, s)", "expand_" + n, "<int64[4] s = {2, 3, 5, 4}>");
    run_case({{"x", t, {3, 4}}}, t, "y = Tile(x, r)", "tile_" + n, "<int64[2] r = {2, 3}>");
    run_case({{"x", t, {3, 4, 5}}}, t, "y = Reshape(x, s)", "reshape_" + n, "<int64[2] s = {12, -1}>");
    run_case({{"x", t, {3, 4, 5}}}, t, "y = Flatten<axis = 2>(x)", "flatten_" + n);
    run_case({{"x", t, {3, 1, 5}}}, t, "y = Squeeze(x, a)", "squeeze_" + n, "<int64[1] a = {1}>");
    run_case({{"x", t, {3, 5}}}, t, "y = Unsqueeze(x, a)", "unsqueeze_" + n, "<int64[2] a = {0, 3}>");
    run_case({{"x", t, {3, 5}}}, t, "y = Identity(x)", "identity_" + n);
  }
  run_case({{"x", DType::kFloat32, {4, 5}}, {"i", DType::kInt32, {3}}}, DType::kFloat32, "y = Gather<axis = 1>(x, i)",
           "gather_runtime_indices", "", 18);
}

TEST(GpuKernelsData, Reductions) {
  KILN_KERNEL_TEST_START();
  const char* ops[] = {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceL1", "ReduceL2", "ReduceSumSquare"};
  const std::string axes_sets[] = {"{-1}", "{1}", "{0, 2}", "{1, 2, 3}", "{0, 1, 2, 3}"};
  for (DType t : {DType::kFloat32, DType::kFloat16}) {
    for (const char* op : ops) {
      int k = 0;
      for (const std::string& axes : axes_sets) {
        for (int keep : {0, 1}) {
          const int n = static_cast<int>(std::count(axes.begin(), axes.end(), ',')) + 1;
          run_case({{"x", t, {3, 4, 5, 67}}}, t, "y = " + std::string(op) + "<keepdims = " + std::to_string(keep) + ">(x, a)",
                   std::string(op) + std::to_string(k++) + "_" + dtype_name(t),
                   "<int64[" + std::to_string(n) + "] a = " + axes + ">");
        }
      }
    }
    run_case({{"x", t, {2, 3, 4}}}, t, "y = ReduceProd<keepdims = 0>(x, a)", std::string("prod_") + dtype_name(t),
             "<int64[1] a = {1}>");
  }
  for (const char* op : {"ArgMax", "ArgMin"}) {
    for (int axis : {0, 1, 2}) {
      for (int last : {0, 1}) {
        run_case({{"x", DType::kFloat32, {4, 37, 5}}}, DType::kInt64,
                 std::string("y = ") + op + "<axis = " + std::to_string(axis) + ", select_last_index = " +
                     std::to_string(last) + ">(x)",
                 std::string(op) + "_ax" + std::to_string(axis) + "_last" + std::to_string(last));
      }
    }
  }
}

TEST(GpuKernelsData, Resize) {
  KILN_KERNEL_TEST_START();
  const std::string modes[] = {
      "mode = \"nearest\"",
      "mode = \"nearest\", coordinate_transformation_mode = \"asymmetric\", nearest_mode = \"floor\"",
      "mode = \"linear\"",
      "mode = \"linear\", coordinate_transformation_mode = \"align_corners\"",
      "mode = \"linear\", coordinate_transformation_mode = \"pytorch_half_pixel\"",
      "mode = \"cubic\"",
      "mode = \"linear\", antialias = 1"};
  const std::string scales[] = {"{1.0, 1.0, 2.0, 2.0}", "{1.0, 1.0, 0.5, 0.75}", "{1.0, 1.0, 1.7, 0.6}"};
  for (DType t : {DType::kFloat32, DType::kFloat16}) {
    int k = 0;
    for (const std::string& m : modes) {
      for (const std::string& s : scales) {
        run_case({{"x", t, {2, 3, 8, 10}}}, t, "y = Resize<" + m + ">(x, , sc)", "resize" + std::to_string(k++) + "_" + dtype_name(t),
                 "<float[4] sc = " + s + ">", 18);
      }
    }
  }
  run_case({{"x", DType::kUInt8, {1, 3, 5, 5}}}, DType::kUInt8, "y = Resize<mode = \"nearest\">(x, , , sz)",
           "resize_nearest_uint8_sizes", "<int64[4] sz = {1, 3, 9, 4}>");
}

TEST(GpuKernelsData, QuantizeDequantize) {
  KILN_KERNEL_TEST_START();
  // Per tensor, int8 and uint8 with zero points.
  run_case({{"x", DType::kFloat32, {3, 4, 5}}}, DType::kInt8, "y = QuantizeLinear(x, s, z)", "quant_int8",
           "<float s = {0.03}, int8 z = {-3}>");
  run_case({{"x", DType::kFloat32, {3, 4, 5}}}, DType::kUInt8, "y = QuantizeLinear(x, s, z)", "quant_uint8",
           "<float s = {0.02}, uint8 z = {128}>");
  // Per axis (axis 1).
  run_case({{"x", DType::kFloat32, {2, 3, 7}}}, DType::kInt8, "y = QuantizeLinear<axis = 1>(x, s, z)", "quant_axis",
           "<float[3] s = {0.01, 0.05, 0.2}, int8[3] z = {0, 5, -5}>");
  // fp8 e4m3 (opset 21's output_dtype, 17 = FLOAT8E4M3FN), saturating, then back to float (the
  // text format has no fp8 type name for a graph output).
  run_case({{"x", DType::kFloat32, {4, 9}}}, DType::kFloat32,
           "q = QuantizeLinear<output_dtype = 17>(x, s)\n  y = DequantizeLinear(q, s)", "quant_fp8",
           "<float s = {0.01}>", 21);
  run_case({{"x", DType::kInt8, {3, 4, 5}}}, DType::kFloat32, "y = DequantizeLinear(x, s, z)", "dequant_int8",
           "<float s = {0.03}, int8 z = {-3}>");
  run_case({{"x", DType::kUInt8, {2, 3, 7}}}, DType::kFloat32, "y = DequantizeLinear<axis = 1>(x, s, z)", "dequant_axis",
           "<float[3] s = {0.01, 0.05, 0.2}, uint8[3] z = {0, 5, 200}>");
}

}  // namespace
}  // namespace kiln::testing
