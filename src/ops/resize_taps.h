// Resize's per-axis coordinate mapping, shared by the CPU kernel and the GPU layer: for each
// output coordinate along an axis, the input elements ("taps") it reads and their weights,
// following the ONNX reference implementation.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ops/resize.h"

namespace kiln::ops {

struct ResizeOptions {
  std::string mode, ctm, nearest_mode;
  double cubic_a = -0.75;
  bool exclude_outside = false;
  bool antialias = false;
};

// The options of a Resize node, with the defaults the spec gives.
ResizeOptions resize_options(const ir::Node& node);

struct ResizeTap {
  int64_t index;
  double weight;
};

// Taps of every output coordinate along one axis; `outside` marks coordinates that fall
// outside the crop of tf_crop_and_resize and take the extrapolation value.
struct ResizeAxisTaps {
  std::vector<std::vector<ResizeTap>> taps;
  std::vector<bool> outside;
};

ResizeAxisTaps resize_axis_taps(const ResizeOptions& o, const ResizeDim& d);

}  // namespace kiln::ops
