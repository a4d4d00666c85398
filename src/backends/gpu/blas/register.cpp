#include "backends/gpu/layer.h"

namespace kiln::gpu {
namespace blas {
void register_gemm_layers(LayerRegistry& r);
}

void register_blas_layers(LayerRegistry& r) { blas::register_gemm_layers(r); }

}  // namespace kiln::gpu
