// Layer factories of the normalization family: Softmax, LogSoftmax, LayerNormalization and
// inference BatchNormalization (folded at build time into per-channel a, b: y = x * a + b).
#include <cmath>

#include "backends/gpu/kernels/layer_util.h"
#include "backends/gpu/kernels/norm.h"
#include "backends/gpu/kernels/registry.h"
#include "ops/matmul.h"

namespace kiln::gpu::kern {
namespace {

Status build_softmax(LayerBuildContext& ctx, std::unique_ptr<Layer>* out) {
  const DType t = ctx.inputs[0].dtype;
  if (!norm_supported(t)) return reject(ctx, "no GPU kernel for {}", dtype_name(t));
  ops::SoftmaxGeometry g;
  const Status st = ops::softmax_geometry(ctx.node, ctx.inputs[0].shape, &g);
  if (!st.ok()) return st.with_context(ctx.node.describe());
  const bool log = ctx.node.op_type == "LogSoftmax";
  const std::string tactic = "kiln " + ctx.node.op_type +
                             (g.inner != 1 ? " column" : g.axis_len <= 1024 ? " warp-per-row" : " block-per-row");
  return make_layer(out, tactic, [t, log, g](const LaunchArgs& a) {
    launch_softmax(t, log, g.outer, g.axis_len, g.inner, a.inputs[0], a.outputs[0], a.stream);
  });
}

Status build_layer_norm(LayerBuildContext& ctx, std::unique_ptr<Layer>* out) {
  const TensorDesc& x = ctx.inputs[0];
  if (!norm_supported(x.dtype)) return reject(ctx, "no GPU kernel for {}", dtype_name(x.dtype));
  int64_t axis = ctx.node.attr_i("axis", -1);
  if (!normalize_axis(&axis, static_cast<int64_t>(x.shape.size()))) return reject(ctx, "axis out of range");
  const int64_t rows = product(x.shape, 0, axis), cols = product(x.shape, axis, x.shape.size());
  // Scale and bias must cover the normalized dims exactly (the usual case); broadcast ones
  // go to the CPU.
  const bool has_bias = ctx.inputs.size() > 2 && ctx.inputs[2].present();
  if (ctx.inputs[1].numel() != cols || ctx.inputs[1].dtype != x.dtype ||
      (has_bias && (ctx.inputs[2].numel() != cols || ctx.inputs[2].dtype != x.dtype))) {
    return reject(ctx, "scale/bias broadcast over the normalized dims");
  }
  for (size_t i = 1; i < ctx.outputs.size(); ++i) {
    if (ctx.outputs[i].present() && ctx.outputs[i].dtype != DType::kFloat32) return reject(ctx, "stash_type not float");
  }
  const float eps = ctx.node.attr_f("epsilon", 1e-5f);
  const DType t = x.dtype;
  return make_layer(out, cols <= 1024 ? "kiln layernorm warp-per-row" : "kiln layernorm block-per-row",
                    [t, rows, cols, eps, has_bias](const LaunchArgs& a) {
                      auto opt = [&](size_t i) { return i < a.outputs.size() ? static_cast<float*>(a.outputs[i]) : nullptr; };
                      launch_layer_norm(t, rows, cols, eps, a.inputs[0], a.inputs[1], has_bias ? a.inputs[2] : nullptr,
                                        a.outputs[0], opt(1), opt(2), a.stream);
                    });
}

Status build_batch_norm(LayerBuildContext& ctx, std::unique_ptr<Layer>* out) {
  const ir::Node& n = ctx.node;
  const TensorDesc& x = ctx.inputs[0];
  if (!norm_supported(x.dtype)) return reject(ctx, "no GPU kernel for {}", dtype_name(x.dtype));
  if (n.attr_i("training_mode", 0) != 0 || n.attr_i("spatial", 1) == 0) return reject(ctx, "training or spatial=0");
  for (size_t i = 1; i < ctx.outputs.size(); ++i) {
    if (ctx.outputs[i].present()) return reject(ctx, "running statistics outputs");
  }
  if (x.shape.size() < 2) return reject(ctx, "rank < 2");
  const int64_t channels = x.shape[1];
  std::vector<double> p[4];  // scale, bias, mean, var
  for (int i = 0; i < 4; ++i) {
    if (!constant_doubles(ctx, i + 1, &p[i]) || static_cast<int64_t>(p[i].size()) != channels) {
      return reject(ctx, "parameters are not constants of {} channels", channels);
    }
  }
  // Folded in double, as the CPU reference does.
  const double eps = n.attr_f("epsilon", 1e-5f);
  std::vector<float> ab(2 * channels);
  for (int64_t c = 0; c < channels; ++c) {
    const double a = p[0][c] / std::sqrt(p[3][c] + eps);
    ab[c] = static_cast<float>(a);
    ab[channels + c] = static_cast<float>(p[1][c] - p[2][c] * a);
  }
  const auto buf = upload(ab);
  const int64_t total = x.numel(), inner = product(x.shape, 2, x.shape.size());
  const DType t = x.dtype;
  return make_layer(
      out, "kiln batchnorm affine",
      [t, total, channels, inner, buf](const LaunchArgs& a) {
        const float* d = static_cast<const float*>(buf->data());
        launch_channel_affine(t, total, channels, inner, d, d + channels, a.inputs[0], a.outputs[0], a.stream);
      },
      true, buf->bytes());
}

}  // namespace

void register_norm_layers(LayerRegistry& r) {
  r.add("", "Softmax", build_softmax);
  r.add("", "LogSoftmax", build_softmax);
  r.add("", "LayerNormalization", build_layer_norm);
  r.add("", "BatchNormalization", build_batch_norm);
}

}  // namespace kiln::gpu::kern
