// The cuDNN operation graph of one convolution layer (graph / backend API): tensors X, W, Y
// (+ bias B as 1xKx1x1, + residual Z like Y), CONVOLUTION_FORWARD computing in float, then,
// when the epilogue is fused, POINTWISE add bias, add Z and the activation, with float virtual
// tensors in between. Dims are always given in N, C, H, W order; strides say the layout.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "backends/gpu/dnn/backend_desc.h"
#include "backends/gpu/dnn/conv_setup.h"

namespace kiln::gpu::dnn {

// Unique ids of the tensors kiln passes data for (the variant pack); virtual ones come after.
enum GraphConvUid : int64_t { kUidX = 1, kUidW = 2, kUidB = 3, kUidZ = 4, kUidY = 5, kUidFirstVirtual = 100 };

struct ConvOpGraph {
  // Every descriptor the graph refers to, kept alive as long as the graph and its plans.
  std::vector<BackendDesc> parts;
  BackendDesc graph;
  bool fused = false;         // bias, Z and the activation are inside the graph
  std::vector<int64_t> uids;  // real tensors in the graph: X, W, [B], [Z], Y
  std::string ops;            // "conv+bias+add+relu"
};

// Why the graph path cannot take this convolution at all ("" when it can): strict fp32 (kept
// on the legacy API, whose algorithm list lets kiln exclude TF32, FFT and Winograd), 3-D convs.
std::string graph_conv_unsupported(const ConvSetup& s);

// True when cuDNN's pointwise ops compute the setup's activation exactly as kiln defines it
// (Relu, LeakyRelu, Clip [0, max], Sigmoid, Tanh, Gelu both forms, Silu); otherwise only the
// unfused graph applies and kiln's epilogue kernel runs after.
bool graph_can_fuse_epilogue(const ConvSetup& s);

// Builds and finalizes the operation graph; throws GpuError when cuDNN refuses it.
std::unique_ptr<ConvOpGraph> build_conv_op_graph(const ConvSetup& s, bool fuse);

}  // namespace kiln::gpu::dnn
