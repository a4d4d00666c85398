// Resize on the GPU. The per-axis taps come from ops::resize_axis_taps (the CPU kernel's code);
// nearest becomes per-axis source tables for the gather kernel Pad uses (any dtype), linear
// and cubic become weighted tap tables (float types).
#include <algorithm>
#include <cstring>

#include "backends/gpu/kernels/layer_util.h"
#include "backends/gpu/kernels/movement.h"
#include "backends/gpu/kernels/registry.h"
#include "backends/gpu/kernels/resize.h"
#include "ops/resize_taps.h"

namespace kiln::gpu::kern {
namespace {

// Input i as a constant when present and non-empty (opset 11 passes empty roi/scales).
Status optional_constant(const LayerBuildContext& ctx, size_t i, const Tensor** out) {
  *out = nullptr;
  if (i >= ctx.inputs.size() || !ctx.inputs[i].present() || ctx.inputs[i].numel() == 0) return Status::OK();
  *out = constant_input(ctx, i);
  if (*out == nullptr) return reject(ctx, "input {} is not a constant", i);
  return Status::OK();
}

Status build_resize(LayerBuildContext& ctx, std::unique_ptr<Layer>* out) {
  const ir::Node& node = ctx.node;
  const TensorDesc& x = ctx.inputs[0];
  const ops::ResizeOptions o = ops::resize_options(node);
  const Tensor *roi = nullptr, *scales = nullptr, *sizes = nullptr;
  if (o.ctm == "tf_crop_and_resize") KILN_RETURN_IF_ERROR(optional_constant(ctx, 1, &roi));
  KILN_RETURN_IF_ERROR(optional_constant(ctx, 2, &scales));
  KILN_RETURN_IF_ERROR(optional_constant(ctx, 3, &sizes));
  std::vector<ops::ResizeDim> dims;
  const Status st = ops::plan_resize(node, x.shape, roi, scales, sizes, &dims);
  if (!st.ok()) return st.with_context(node.describe());
  const int r = static_cast<int>(dims.size());
  if (r > kMaxDims) return reject(ctx, "rank over {}", kMaxDims);
  const int64_t n = ctx.outputs[0].numel();
  if (n > 0 && x.numel() == 0) return reject(ctx, "empty input");
  const std::vector<int64_t> in_st = dense_strides(x.shape);
  const float extrapolation = node.attr_f("extrapolation_value", 0.0f);
  std::vector<ops::ResizeAxisTaps> axes;
  for (const ops::ResizeDim& d : dims) axes.push_back(ops::resize_axis_taps(o, d));

  if (o.mode == "nearest") {
    AxisGather g;
    g.rank = r;
    Tensor f(DType::kFloat32, {});  // the extrapolation value in the data's type
    *f.data_as<float>() = extrapolation;
    const Tensor fv = f.to(x.dtype);
    std::memcpy(&g.fill, fv.data(), dtype_size(x.dtype));
    std::vector<int64_t> tables;
    for (int d = 0; d < r; ++d) {
      g.dims[d] = dims[d].out;
      g.table_start[d] = static_cast<int64_t>(tables.size());
      for (int64_t c = 0; c < dims[d].out; ++c) {
        tables.push_back(axes[d].outside[c] ? -1 : axes[d].taps[c][0].index * in_st[d]);
      }
    }
    const auto buf = upload(tables);
    const size_t elem = dtype_size(x.dtype);
    return make_layer(
        out, "kiln resize nearest axis-tables",
        [elem, n, g, buf](const LaunchArgs& a) {
          launch_axis_gather(elem, a.inputs[0], a.outputs[0], n, g, static_cast<const int64_t*>(buf->data()), a.stream);
        },
        false, buf->bytes());
  }
  if (!resize_supported(x.dtype)) return reject(ctx, "no GPU {} resize for {}", o.mode, dtype_name(x.dtype));
  ResizePlan p;
  p.rank = r;
  p.extrapolation = extrapolation;
  std::vector<ResizeTapDev> tables;
  for (int d = 0; d < r; ++d) {
    size_t most = 1;
    for (const auto& t : axes[d].taps) most = std::max(most, t.size());
    p.dims[d] = dims[d].out;
    p.taps[d] = static_cast<int>(most);
    p.table_start[d] = static_cast<int64_t>(tables.size());
    for (int64_t c = 0; c < dims[d].out; ++c) {
      for (size_t k = 0; k < most; ++k) {
        if (axes[d].outside[c]) tables.push_back({-1, 0.0f});
        else if (k < axes[d].taps[c].size()) {
          const ops::ResizeTap& t = axes[d].taps[c][k];
          tables.push_back({t.index * in_st[d], static_cast<float>(t.weight)});
        } else {
          tables.push_back({0, 0.0f});  // padding slot
        }
      }
    }
  }
  const auto buf = upload(tables);
  const DType t = x.dtype;
  return make_layer(
      out, "kiln resize " + o.mode + " tap-tables",
      [t, p, n, buf](const LaunchArgs& a) {
        launch_resize_interp(t, p, static_cast<const ResizeTapDev*>(buf->data()), a.inputs[0], a.outputs[0], n,
                             a.stream);
      },
      false, buf->bytes());
}

}  // namespace

void register_resize_layers(LayerRegistry& r) { r.add("", "Resize", build_resize); }

}  // namespace kiln::gpu::kern
