// The shape sets of a CPU (graph-only) plan: what `kiln plan-info` shows for it, in the same
// JSON form as the GPU part (api/gpu_plan.h): {"inputs", "layers": [{"name","op","tactic"}],
// "memory": {"weights","arena","workspace","peak"}}.
#pragma once
#include <nlohmann/json.hpp>

#include "api/gpu_plan.h"
#include "ir/graph.h"
#include "kiln/status.h"

namespace kiln::builder {

// The layers are the graph's nodes (run by the reference kernels); the arena is what a static
// memory plan of the activations would take for each set. Re-infers `g`'s types for each set
// and restores them after.
Status cpu_shape_sets(ir::Graph& g, const std::vector<ShapeSet>& sets, nlohmann::json* out);

}  // namespace kiln::builder
