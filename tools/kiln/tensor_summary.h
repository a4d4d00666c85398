// One-line statistics of an output tensor (shape, dtype, min, max, mean) and, for a vector of
// scores, its top-5 entries: what `kiln run` prints per output.
#pragma once
#include <string>

#include "kiln/tensor.h"

namespace kiln::cli {

std::string summarize_tensor(const std::string& name, const Tensor& t);

}  // namespace kiln::cli
