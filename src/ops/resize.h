// Arithmetic of Resize shared by shape inference and kernels: per-dimension scales, output
// sizes and regions of interest from the node's attributes and its roi/scales/sizes inputs.
#pragma once
#include <cstdint>
#include <vector>

#include "ir/graph.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::ops {

// How one dimension of Resize's input maps to its output.
struct ResizeDim {
  int64_t in = -1;         // input length (-1 unknown, only during static inference)
  int64_t out = -1;        // output length (-1 unknown)
  double scale = 1.0;      // output/input scale used by the coordinate transformation
  double roi_start = 0.0;  // region of interest (tf_crop_and_resize), normalized coordinates
  double roi_end = 1.0;
};

// Resolves every dimension of an input of shape `in` (-1 for unknown dims). `roi`, `scales`
// and `sizes` are the known input values or nullptr (absent, or empty tensors); exactly one of
// scales and sizes must be given.
Status plan_resize(const ir::Node& node, const std::vector<int64_t>& in, const Tensor* roi, const Tensor* scales,
                   const Tensor* sizes, std::vector<ResizeDim>* dims);

}  // namespace kiln::ops
