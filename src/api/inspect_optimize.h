// The optimizer half of inspect_model: runs the pipeline on a model as Session::load would and
// records what each pass did and the op counts it left.
#pragma once
#include <string>

#include "kiln/inspect.h"

namespace kiln {

// Imports `path` again (declared shapes, as a session sees it), optimizes it per `options` and
// fills the `optimized`, `passes`, `optimize_ms`, `optimized_*` and `graph_text` fields.
Status inspect_optimized(const std::string& path, const InspectOptions& options, ModelSummary* summary);

}  // namespace kiln
