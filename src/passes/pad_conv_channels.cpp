// pad_conv_channels: gives channels-last half-precision convolutions whose input has a number
// of channels that is not a multiple of 8 (an RGB image: 3) zero channels up to the next
// multiple, on the input (a Pad of the last axis) and on the constant weights. Tensor-core
// convolution kernels need channels in multiples of 8; without them cuDNN falls back to slow
// kernels (ResNet-50's first convolution took a quarter of the network's time at batch 256).
// The added channels multiply zero weights, so the result is exactly the same.
#include <algorithm>
#include <cstring>

#include "passes/fusion_util.h"
#include "passes/passes.h"

namespace kiln::passes {
namespace {

constexpr int64_t kChannelMultiple = 8;

// [M, C, k...] -> [M, c_pad, k...] with zeros in the new input channels.
Tensor pad_weight_channels(const Tensor& w, int64_t c_pad) {
  std::vector<int64_t> shape = w.shape();
  const int64_t m = shape[0], c = shape[1];
  shape[1] = c_pad;
  Tensor out(w.dtype(), shape);  // zero-filled
  const size_t block = static_cast<size_t>(w.numel() / (m * c)) * dtype_size(w.dtype());  // one [k...] kernel
  const auto* src = static_cast<const char*>(w.data());
  auto* dst = static_cast<char*>(out.data());
  for (int64_t mi = 0; mi < m; ++mi) std::memcpy(dst + mi * c_pad * block, src + mi * c * block, c * block);
  return out;
}

bool should_pad(const ir::Node& n) {
  if (n.domain != "kiln" || n.op_type != "FusedConv" || n.attr_i("channels_last", 0) == 0) return false;
  if (n.attr_i("group", 1) != 1) return false;
  const ir::Value* x = n.input(0);
  const ir::Value* w = n.input(1);
  if (!x || !w || !w->constant || w->constant->rank() != 4) return false;
  const DType t = x->type.dtype;
  if (t != DType::kFloat16 && t != DType::kBFloat16) return false;
  const int64_t c = w->constant->dim(1);
  return c % kChannelMultiple != 0 && x->type.rank() == 4;
}

class PadConvChannels final : public Pass {
 public:
  std::string name() const override { return "pad_conv_channels"; }
  bool apply(ir::Graph& g, const PassContext&) override {
    std::vector<ir::Node*> todo;
    for (const auto& n : g.nodes()) {
      if (should_pad(*n)) todo.push_back(n.get());
    }
    for (ir::Node* conv : todo) {
      ir::Value* x = conv->input(0);
      const Tensor& w = *conv->input(1)->constant;
      const int64_t c = w.dim(1);
      const int64_t c_pad = (c + kChannelMultiple - 1) / kChannelMultiple * kChannelMultiple;
      ir::Value* w_padded = g.add_constant(conv->input(1)->name + "/pad_c", pad_weight_channels(w, c_pad));
      // NHWC input: pad the last axis at its end only.
      Tensor pads(DType::kInt64, {8});
      pads.data_as<int64_t>()[7] = c_pad - c;
      ir::Value* pads_value = g.add_constant(x->name + "/pad_c_pads", pads);
      std::vector<ir::Dim> padded_dims = *x->type.shape;  // rank 4: should_pad checked
      padded_dims[3] = ir::Dim(c_pad);
      const ir::TensorType padded_type(x->type.dtype, std::move(padded_dims));
      ir::Value* x_padded = g.add_value(x->name + "/pad_c", padded_type);
      ir::Node* pad = g.add_node("Pad", {x, pads_value}, {x_padded}, conv->name + "/pad_c");
      pad->opset = std::max(pad->opset, 13);
      replace_input(conv, 0, x_padded);
      replace_input(conv, 1, w_padded);
    }
    if (!todo.empty()) g.topological_sort();
    return !todo.empty();
  }
};

}  // namespace

std::unique_ptr<Pass> make_pad_conv_channels() { return std::make_unique<PadConvChannels>(); }

}  // namespace kiln::passes
