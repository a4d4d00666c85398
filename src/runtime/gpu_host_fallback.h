// The layer for a node no GPU layer handles: copies its inputs to the host, runs the CPU
// reference kernel, copies the outputs back. It synchronizes the stream, so a network that
// contains one is not captured as a CUDA graph; `tactic()` says "cpu-fallback" so the layer
// list shows where time goes.
#pragma once
#include <memory>

#include "backends/gpu/layer.h"

namespace kiln::runtime {

// `reason` is why no GPU layer was used (printed by describe()).
std::unique_ptr<gpu::Layer> make_host_fallback_layer(const gpu::LayerBuildContext& ctx, std::string reason);

}  // namespace kiln::runtime
