// The registration functions of kiln's own GPU kernel families (src/backends/gpu/kernels).
// LayerRegistry's constructor (layer_registry.cpp) calls register_kernel_layers once.
#pragma once
#include "backends/gpu/layer.h"

namespace kiln::gpu {

namespace kern {
void register_elementwise_layers(LayerRegistry& r);
void register_fused_layers(LayerRegistry& r);
void register_pool_layers(LayerRegistry& r);
void register_norm_layers(LayerRegistry& r);
void register_reduce_layers(LayerRegistry& r);
void register_movement_layers(LayerRegistry& r);
void register_resize_layers(LayerRegistry& r);
void register_quantize_layers(LayerRegistry& r);
}  // namespace kern

// All of the above.
void register_kernel_layers(LayerRegistry& r);

}  // namespace kiln::gpu
