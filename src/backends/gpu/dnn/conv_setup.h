// What a cuDNN convolution layer needs, worked out once from the node and its concrete
// shapes: descriptors, the layer's own copies of constant weights (re-laid to KRSC for
// channels-last) and bias, and the epilogue parameters.
#pragma once
#include <memory>
#include <string>

#include "backends/gpu/device.h"
#include "backends/gpu/dnn/cudnn_util.h"
#include "backends/gpu/dnn/epilogue.h"
#include "backends/gpu/layer.h"

namespace kiln::gpu::dnn {

struct ConvSetup {
  // kUnsupported (the executor falls back to the CPU) for what this layer does not handle:
  // dtypes other than fp32/fp16/bf16, asymmetric pads, more than 3 spatial dims.
  static Status create(LayerBuildContext& ctx, std::unique_ptr<ConvSetup>* out);

  std::string node_name;
  std::string summary;  // "NHWC fp16 3x3 s2 d1 g1"
  // Everything the algorithm choice depends on (dims, pads, strides, layout, dtype, math,
  // fused epilogue): the timing-cache key.
  std::string cache_key;
  cudnnHandle_t handle = nullptr;
  TensorDescriptor x_desc, y_desc, bias_desc;
  FilterDescriptor w_desc;
  ConvDescriptor conv_desc;
  ActivationDescriptor act_desc;
  size_t x_bytes = 0, y_bytes = 0, w_bytes = 0, bias_bytes = 0;
  bool strict_fp32 = false;  // fp32 tensors and precision fp32: no TF32 tensor cores
  bool has_bias_input = false, has_z = false;
  struct {
    int kind = 0;  // ops::ActivationKind
  } act;
  EpilogueType epilogue_type = EpilogueType::kFloat32;
  EpilogueParams epilogue;

  bool needs_epilogue() const { return has_bias_input || has_z || epilogue.activation != 0; }
  // The layer's own device copies (nullptr when the input is read from LaunchArgs).
  const void* weights() const { return w_own.data(); }
  const void* bias() const { return b_own.data(); }
  bool owns_input(size_t i) const { return (i == 1 && w_own.data()) || (i == 2 && b_own.data()); }
  size_t owned_bytes() const { return w_own.bytes() + b_own.bytes(); }

  DeviceBuffer w_own, b_own;
};

}  // namespace kiln::gpu::dnn
