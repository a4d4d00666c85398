// Layer factories of the pooling family: MaxPool, AveragePool, GlobalAveragePool,
// GlobalMaxPool (channels-first) and kiln.ChannelsLastPool (the same modes, channels-last).
// Windows are resolved by ops::resolve_window, the function the CPU kernels use.
#include "backends/gpu/kernels/layer_util.h"
#include "backends/gpu/kernels/pool.h"
#include "backends/gpu/kernels/registry.h"
#include "ops/conv_pool.h"
#include "ops/layout_ops.h"

namespace kiln::gpu::kern {
namespace {

// Fills p from the channels-first shape (N, C, spatial...) of the input and the pool node.
Status window_params(const ir::Node& n, const std::vector<int64_t>& x, bool global, PoolParams* p) {
  const int nsp = static_cast<int>(x.size()) - 2;
  if (nsp < 1 || nsp > 3) return unsupported("{} spatial dims (GPU pools take 1 to 3)", nsp);
  p->batch = x[0];
  p->channels = x[1];
  const std::vector<int64_t> in(x.begin() + 2, x.end());
  ops::Window w;
  if (global) {
    w.nsp = nsp;
    w.in = in;
    w.kernel = in;
    w.strides.assign(nsp, 1);
    w.dilations.assign(nsp, 1);
    w.pads.assign(2 * nsp, 0);
    w.out.assign(nsp, 1);
  } else {
    ops::WindowAttrs a;
    KILN_RETURN_IF_ERROR(ops::read_window_attrs(n, nsp, &a));
    KILN_RETURN_IF_ERROR(ops::resolve_window(a, a.kernel, in, &w));
  }
  const int lead = 3 - nsp;
  for (int d = 0; d < nsp; ++d) {
    p->in[lead + d] = static_cast<int>(w.in[d]);
    p->out[lead + d] = static_cast<int>(w.out[d]);
    p->kernel[lead + d] = static_cast<int>(w.kernel[d]);
    p->stride[lead + d] = static_cast<int>(w.strides[d]);
    p->dilation[lead + d] = static_cast<int>(w.dilations[d]);
    p->pad_begin[lead + d] = static_cast<int>(w.pad_begin(d));
    p->pad_end[lead + d] = static_cast<int>(w.pad_end(d));
  }
  return Status::OK();
}

// Builds any pool given its plain op type `mode` and whether the data is channels-last.
Status build_pool_mode(LayerBuildContext& ctx, const ir::Node& plain, bool channels_last, std::unique_ptr<Layer>* out) {
  const std::string& mode = plain.op_type;
  const DType t = ctx.inputs[0].dtype;
  if (!pool_supported(t)) return reject(ctx, "no GPU {} for {}", mode, dtype_name(t));
  if (ctx.outputs.size() > 1 && ctx.outputs[1].present()) return reject(ctx, "MaxPool Indices output");
  const bool global = mode == "GlobalAveragePool" || mode == "GlobalMaxPool";
  PoolParams p;
  if (mode == "MaxPool" || mode == "GlobalMaxPool") {
    p.mode = PoolMode::kMax;
  } else if (mode == "AveragePool" || mode == "GlobalAveragePool") {
    p.mode = PoolMode::kAverage;
    p.count_include_pad = plain.attr_i("count_include_pad", 0) != 0;
  } else {
    return reject(ctx, "pool mode {}", mode);
  }
  std::vector<int64_t> x = ctx.inputs[0].shape;
  if (channels_last) {  // (N, spatial..., C) -> (N, C, spatial...)
    if (x.size() < 3) return reject(ctx, "rank {}", x.size());
    x.insert(x.begin() + 1, x.back());
    x.pop_back();
  }
  const Status st = window_params(plain, x, global, &p);
  if (!st.ok()) return st.with_context(ctx.node.describe());
  p.channels_last = channels_last;
  if (global && !channels_last) {
    const int64_t planes = p.batch * p.channels, plane = product(x, 2, x.size());
    return make_layer(out, "kiln " + mode + " warp-per-plane", [t, planes, plane, p](const LaunchArgs& a) {
      launch_global_pool(t, p.mode, planes, plane, a.inputs[0], a.outputs[0], a.stream);
    });
  }
  if (global) {  // channels-last
    const int64_t batch = p.batch, channels = p.channels, plane = product(x, 2, x.size());
    if (batch > 65535) return reject(ctx, "batch {} > 65535 for the channels-last global pool", batch);
    return make_layer(out, "kiln " + mode + " nhwc block-reduce", [t, batch, plane, channels, p](const LaunchArgs& a) {
      launch_global_pool_nhwc(t, p.mode, batch, plane, channels, a.inputs[0], a.outputs[0], a.stream);
    });
  }
  const std::string tactic = "kiln " + mode + (channels_last ? " nhwc vec-c" : " nchw");
  return make_layer(out, tactic, [t, p](const LaunchArgs& a) { launch_pool(t, p, a.inputs[0], a.outputs[0], a.stream); });
}

Status build_pool(LayerBuildContext& ctx, std::unique_ptr<Layer>* out) {
  return build_pool_mode(ctx, ctx.node, false, out);
}

Status build_channels_last_pool(LayerBuildContext& ctx, std::unique_ptr<Layer>* out) {
  const ir::Node plain = ops::channels_first_pool_node(ctx.node);
  return build_pool_mode(ctx, plain, true, out);
}

}  // namespace

void register_pool_layers(LayerRegistry& r) {
  for (const char* op : {"MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"}) r.add("", op, build_pool);
  r.add("kiln", "ChannelsLastPool", build_channels_last_pool);
}

}  // namespace kiln::gpu::kern
