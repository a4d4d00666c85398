// Input profiles (kiln/build.h) checked against a model input.
#pragma once
#include "kiln/build.h"

namespace kiln {

// The shapes fit the input's declared shape (rank, fixed dims) and min <= opt <= max.
Status check_input_profile(const InputProfile& p, const TensorInfo& input);

}  // namespace kiln
