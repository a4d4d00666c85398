// The optimization pipelines: plain ordered lists of passes per level.
//   -O0  import only
//   -O1  clean-ups and folding, for any backend
//   -O2  + algebraic folds, fusions and layout (the default)
#pragma once
#include <string>
#include <vector>

#include "passes/pass_manager.h"

namespace kiln::passes {

inline constexpr int kDefaultOptLevel = 2;
inline constexpr int kMaxOptLevel = 2;

PassManager build_pipeline(int level);

// Every pass name the -O2 pipeline knows (for checking --disable-pass arguments).
std::vector<std::string> known_pass_names();

}  // namespace kiln::passes
