// Host-side helpers that turn an ONNX elementwise node into an op code and its parameters;
// shared by the per-op layers and the FusedElementwise program builder.
#pragma once
#include <vector>

#include "backends/gpu/kernels/ew_ops.h"
#include "ir/graph.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::gpu::kern {

// The op code of node n (Sum -> Add, Gelu with approximate=tanh -> GeluTanh); false if none.
bool ew_op_of(const ir::Node& n, EwOp* op, EwKind* kind);

// The parameters of node n computing in dtype t. `bounds` are Clip's min/max inputs (nullptr
// when absent); a present bound that is not a known one-element tensor is kUnsupported.
Status ew_params_of(const ir::Node& n, EwOp op, DType t, const Tensor* min, const Tensor* max, bool min_present,
                    bool max_present, EwParams* p);

}  // namespace kiln::gpu::kern
