// Element-wise comparison of an output against a reference, as ONNX backend tests define it:
// |actual - expected| <= atol + rtol * |expected|, NaN equal to NaN, integers exact.
#pragma once
#include <string>

#include "kiln/tensor.h"

namespace kiln::cli {

struct CompareResult {
  bool ok = true;
  std::string why;        // first mismatch, when !ok
  double max_abs_err = 0;
  double max_rel_err = 0;
};

CompareResult compare_tensors(const Tensor& actual, const Tensor& expected, double rtol, double atol);

}  // namespace kiln::cli
