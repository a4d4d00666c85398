#include "backends/gpu/kernels/registry.h"

namespace kiln::gpu {

void register_kernel_layers(LayerRegistry& r) {
  kern::register_elementwise_layers(r);
  kern::register_fused_layers(r);
  kern::register_pool_layers(r);
  kern::register_norm_layers(r);
  kern::register_movement_layers(r);
  kern::register_reduce_layers(r);
  kern::register_resize_layers(r);
  kern::register_quantize_layers(r);
}

}  // namespace kiln::gpu
