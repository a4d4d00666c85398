// Joining requests' tensors along dim 0 into one batch and splitting a batch's outputs back,
// for the dynamic batcher.
#pragma once
#include <cstdint>
#include <vector>

#include "kiln/tensor.h"

namespace kiln::serve {

// Concatenates tensors of one dtype whose shapes agree except in dim 0 (rank >= 1).
Tensor concat_rows(const std::vector<const Tensor*>& parts);

// Splits `batch` along dim 0 into pieces of `rows[i]` rows (copies). False when `batch` has
// rank 0 or its dim 0 is not the sum of `rows`: the output carries no batch dim.
bool split_rows(const Tensor& batch, const std::vector<int64_t>& rows, std::vector<Tensor>* pieces);

}  // namespace kiln::serve
