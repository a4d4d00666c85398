#include "backends/gpu/layer.h"

namespace kiln::gpu {
namespace dnn {
void register_conv_layers(LayerRegistry& r);
void register_conv_transpose_layer(LayerRegistry& r);
}

void register_dnn_layers(LayerRegistry& r) {
  dnn::register_conv_layers(r);
  dnn::register_conv_transpose_layer(r);
}

}  // namespace kiln::gpu
