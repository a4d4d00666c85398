// Seeded random inputs for a session, shared by `kiln run --random-inputs` and `kiln bench`.
#pragma once
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "kiln/session.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::cli {

// Seeded data for an input: floats uniform in [-1, 1), integers in [0, 10) (small enough to
// be valid indices or sizes in most models), booleans half true.
Tensor random_tensor(DType dtype, const std::vector<int64_t>& shape, std::mt19937& rng);

struct RandomInputOptions {
  std::vector<std::string> shapes;  // --shape NAME=d1,d2,... (replaces the declared shape)
  // > 0: replaces dim 0 of every input whose declared dim 0 is dynamic (also in a --shape),
  // and any other dynamic dim without a --shape is an error; 0: dynamic dims become 1.
  int64_t batch = 0;
  uint32_t seed = 0;
};

// Fills every input of `s` not already in `inputs` with random data. Errors name the input and
// the --shape flag to give.
Status fill_random_inputs(const Session& s, const RandomInputOptions& options, std::map<std::string, Tensor>* inputs);

// The session input called `name`, or nullptr.
const TensorInfo* find_info(const std::vector<TensorInfo>& infos, const std::string& name);

}  // namespace kiln::cli
