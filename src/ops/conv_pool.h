// Window arithmetic shared by Conv, ConvTranspose and the pooling ops: reading the window
// attributes (kernel_shape, strides, dilations, pads, auto_pad, ceil_mode) and resolving them,
// for given input sizes, into output sizes and effective pads. Shape inference, cost and every
// backend's kernels use these functions, so they all agree on the same numbers.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "kiln/status.h"
#include "ops/op_schema.h"

namespace kiln::ops {

enum class AutoPad { kNotSet, kSameUpper, kSameLower, kValid };

// Window attributes of one node, with defaults filled in for `nsp` spatial dims.
struct WindowAttrs {
  int nsp = 0;  // number of spatial dims
  AutoPad auto_pad = AutoPad::kNotSet;
  std::vector<int64_t> kernel;     // empty when the node has no kernel_shape (Conv: from W)
  std::vector<int64_t> strides;    // nsp entries
  std::vector<int64_t> dilations;  // nsp entries
  std::vector<int64_t> pads;       // 2*nsp entries: all begins, then all ends
  bool ceil_mode = false;
  // ConvTranspose only.
  std::vector<int64_t> output_padding;  // nsp entries
  std::vector<int64_t> output_shape;    // empty, or nsp spatial sizes
};

// Reads and validates the window attributes of `node` for `nsp` spatial dims. The attributes
// a given op does not have are simply absent on its nodes and keep their defaults.
Status read_window_attrs(const ir::Node& node, int nsp, WindowAttrs* out);

// A window op resolved for concrete (or partly unknown, -1) input spatial sizes.
struct Window {
  int nsp = 0;
  std::vector<int64_t> in;  // input spatial sizes (-1 unknown)
  std::vector<int64_t> kernel;
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  std::vector<int64_t> pads;  // effective pads, begins then ends (may be negative for ConvTranspose)
  std::vector<int64_t> out;   // output spatial sizes (-1 unknown)

  int64_t pad_begin(int d) const { return pads[d]; }
  int64_t pad_end(int d) const { return pads[nsp + d]; }
  // Extent of the dilated kernel along dim d.
  int64_t extent(int d) const { return (kernel[d] - 1) * dilations[d] + 1; }
};

// Resolves a sliding window (Conv, MaxPool, AveragePool, LpPool): output size per dim
// floor((in + pads - extent) / stride) + 1 (ceil with ceil_mode, dropping a last window that
// would start in the end padding), or from auto_pad. `kernel` has nsp entries. Unknown input
// sizes give unknown output sizes. Error when the window does not fit.
Status resolve_window(const WindowAttrs& a, const std::vector<int64_t>& kernel,
                      const std::vector<int64_t>& in, Window* w);

// Resolves ConvTranspose: out = stride*(in-1) + output_padding + extent - pads, or pads derived
// from output_shape / auto_pad SAME_* (output = in*stride).
Status resolve_transpose_window(const WindowAttrs& a, const std::vector<int64_t>& kernel,
                                const std::vector<int64_t>& in, Window* w);

// Conv's output shape inference and cost, shared with the quantized convolutions (ConvInteger,
// QLinearConv) whose W and bias sit at other input slots. X is input 0; b_slot may be absent.
Status infer_conv_shape(InferContext& ctx, int w_slot, int b_slot, DType out_dtype);
Cost conv_cost(const CostContext& c, int w_slot);

// ConvInteger and QLinearConv (conv_pool_quant.cpp).
void register_conv_quant_ops(OpRegistry& r);

}  // namespace kiln::ops
