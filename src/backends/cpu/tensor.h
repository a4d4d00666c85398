// CPU kernels of the shape and data-movement op family, registered in pieces by
// register_tensor_kernels (tensor.cpp).
#pragma once
#include "backends/cpu/kernel.h"

namespace kiln::cpu {

void register_tensor_layout_kernels(KernelRegistry& r);    // Transpose, Concat, Split, Slice, Expand, Tile
void register_tensor_pad_kernels(KernelRegistry& r);       // Pad, CenterCropPad, DepthToSpace, SpaceToDepth
void register_tensor_generate_kernels(KernelRegistry& r);  // ConstantOfShape, Range, Dropout, Trilu

}  // namespace kiln::cpu
