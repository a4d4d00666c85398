// Layer factories of QuantizeLinear / DequantizeLinear. The layout (per tensor / per axis) is
// resolved by ops::resolve_quant_layout, as on the CPU; blocked quantization and the
// `precision` attribute go to the CPU.
#include "backends/gpu/kernels/layer_util.h"
#include "backends/gpu/kernels/quantize.h"
#include "backends/gpu/kernels/registry.h"
#include "ops/cast_quant.h"

namespace kiln::gpu::kern {
namespace {

Status geometry(LayerBuildContext& ctx, QuantGeometry* g) {
  ops::QuantLayout l;
  const Status st = ops::resolve_quant_layout(ctx.node, ctx.inputs[0].shape, ctx.inputs[1].shape, &l);
  if (!st.ok()) return st.with_context(ctx.node.describe());
  if (l.kind == ops::QuantLayout::Kind::kBlocked) return reject(ctx, "blocked quantization");
  if (ctx.node.attr_i("precision", 0) != 0) return reject(ctx, "precision attribute");
  g->n = ctx.inputs[0].numel();
  if (l.kind == ops::QuantLayout::Kind::kPerAxis) {
    g->axis_dim = l.axis_dim;
    g->inner = l.inner;
  }
  return Status::OK();
}

bool has_zero_point(const LayerBuildContext& ctx) { return ctx.inputs.size() > 2 && ctx.inputs[2].present(); }

Status build_quantize(LayerBuildContext& ctx, std::unique_ptr<Layer>* out) {
  const DType x = ctx.inputs[0].dtype, s = ctx.inputs[1].dtype, q = ctx.outputs[0].dtype;
  if (!quantize_supported(x, s, q)) {
    return reject(ctx, "no GPU kernel for {} / {} -> {}", dtype_name(x), dtype_name(s), dtype_name(q));
  }
  QuantGeometry g;
  KILN_RETURN_IF_ERROR(geometry(ctx, &g));
  const bool zp = has_zero_point(ctx);
  if (zp && ctx.inputs[2].dtype != q) return reject(ctx, "zero point type differs from the output's");
  const bool saturate = ctx.node.attr_i("saturate", 1) != 0;
  return make_layer(out, std::string("kiln quantize ") + dtype_name(q) + (g.axis_dim > 1 ? " per-axis" : " per-tensor"),
                    [=](const LaunchArgs& a) {
                      launch_quantize(x, s, q, g, saturate, a.inputs[0], a.inputs[1], zp ? a.inputs[2] : nullptr,
                                      a.outputs[0], a.stream);
                    });
}

Status build_dequantize(LayerBuildContext& ctx, std::unique_ptr<Layer>* out) {
  const DType q = ctx.inputs[0].dtype, s = ctx.inputs[1].dtype;
  if (!dequantize_supported(q, s) || ctx.outputs[0].dtype != s) {
    return reject(ctx, "no GPU kernel for {} * {}", dtype_name(q), dtype_name(s));
  }
  QuantGeometry g;
  KILN_RETURN_IF_ERROR(geometry(ctx, &g));
  const bool zp = has_zero_point(ctx);
  if (zp && ctx.inputs[2].dtype != q) return reject(ctx, "zero point type differs from the input's");
  return make_layer(out, std::string("kiln dequantize ") + dtype_name(q) + (g.axis_dim > 1 ? " per-axis" : " per-tensor"),
                    [=](const LaunchArgs& a) {
                      launch_dequantize(q, s, g, a.inputs[0], a.inputs[1], zp ? a.inputs[2] : nullptr, a.outputs[0],
                                        a.stream);
                    });
}

}  // namespace

void register_quantize_layers(LayerRegistry& r) {
  r.add("", "QuantizeLinear", build_quantize);
  r.add("", "DequantizeLinear", build_dequantize);
}

}  // namespace kiln::gpu::kern
