// Shape and data-movement op family: arithmetic that shape inference and every backend's
// kernels must agree on (Slice clamping, Pad splitting, Split sizes), plus the pieces the
// family's registration is split into.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/dispatch.h"
#include "ir/graph.h"
#include "kiln/status.h"
#include "ops/op_schema.h"

namespace kiln::ops {

// Registration pieces, called by register_tensor_ops (tensor.cpp).
void register_tensor_reshape_ops(OpRegistry& r);   // Reshape, Flatten, Squeeze, Unsqueeze, Shape, Size
void register_tensor_layout_ops(OpRegistry& r);    // Transpose, Concat, Split, Slice, Expand, Tile
void register_tensor_pad_ops(OpRegistry& r);       // Pad, CenterCropPad, DepthToSpace, SpaceToDepth
void register_tensor_generate_ops(OpRegistry& r);  // ConstantOfShape, Range, Dropout, Trilu

// Costs: the family moves bytes and does no arithmetic; view ops (Reshape, Squeeze...) share
// their input's storage and cost nothing.
Cost movement_cost(const CostContext& ctx);
Cost view_cost(const CostContext& ctx);

// Moves an older opset's attribute form into input slot `index` as a constant, so infer and
// kernels see the newest form only. Missing slots before `index` become absent inputs.
void attribute_to_input(ir::Node& node, ir::Graph& g, const std::string& attr, size_t index, Tensor value);

// One sliced axis after ONNX clamping: elements start, start+step, ... (size of them).
struct SliceRange {
  int64_t start = 0;
  int64_t step = 1;
  int64_t size = 0;
};
// Clamps a Slice's start/end for an axis of `dim` elements the way the ONNX spec does.
SliceRange slice_range(int64_t dim, int64_t start, int64_t end, int64_t step);

struct SliceSpec {
  int axis;  // normalized
  int64_t start, end, step;
};
// Validates Slice's starts/ends/axes/steps (axes and steps may be empty: all axes, step 1).
Status resolve_slice(int rank, const std::vector<int64_t>& starts, const std::vector<int64_t>& ends,
                     const std::vector<int64_t>& axes, const std::vector<int64_t>& steps,
                     std::vector<SliceSpec>* out);

// Splits ONNX pads ([b_0..b_n, e_0..e_n] over `axes`, all axes when empty) into per-dim
// begin/end amounts for a tensor of `rank` dims.
Status resolve_pads(int rank, const std::vector<int64_t>& pads, const std::vector<int64_t>& axes,
                    std::vector<int64_t>* begin, std::vector<int64_t>* end);

// Pad modes, and which input index output index `i` (already shifted by the begin pad)
// reads along an axis of `dim` elements: -1 for the constant value.
enum class PadMode { kConstant, kReflect, kEdge, kWrap };
Status parse_pad_mode(const std::string& mode, PadMode* out);
int64_t pad_source_index(PadMode mode, int64_t i, int64_t dim);

// Element types Range accepts, and its output length ceil((limit - start) / delta), at least 0.
using RangeTypes = TypeList<float, double, float16, bfloat16, int16_t, int32_t, int64_t>;
Status range_length(const Tensor& start, const Tensor& limit, const Tensor& delta, int64_t* n);

// Normalizes a list of axes for `rank`, rejecting out-of-range and repeated axes.
Status normalize_axes(const std::vector<int64_t>& axes, int rank, std::vector<int64_t>* out);

// Product of dims: known when all are; a single unknown dim (times 1) keeps its symbol.
ir::Dim dim_product(const std::vector<ir::Dim>& dims);

// The known integer value of input i, when it is known.
bool input_ints(const InferContext& ctx, int i, std::vector<int64_t>* out);
// The number of elements of 1-D input i when its shape is statically known, else -1.
int64_t input_length(const InferContext& ctx, int i);

// A rank-`rank` shape of unknown dims.
std::vector<ir::Dim> unknown_dims(int rank);

}  // namespace kiln::ops
