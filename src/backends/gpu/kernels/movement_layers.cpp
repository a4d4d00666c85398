// Layer factories of the data-movement family: Transpose, Slice, Expand, Tile (strided copies),
// Concat (2-D async copies), Pad (per-axis source tables from ops::pad_source_index, as on
// the CPU), Gather, and the reshapes (Reshape, Flatten, Squeeze, Unsqueeze, Identity), which
// alias their input when the executor lets them.
#include <cstring>

#include "backends/gpu/check.h"
#include "backends/gpu/kernels/elementwise.h"
#include "backends/gpu/kernels/layer_util.h"
#include "backends/gpu/kernels/movement.h"
#include "backends/gpu/kernels/registry.h"
#include "ops/tensor.h"

namespace kiln::gpu::kern {
namespace {

using Strides = std::vector<std::array<int64_t, 1>>;

Status strided_layer(LayerBuildContext& ctx, const std::vector<int64_t>& dims, const Strides& st, int64_t base,
                     const std::string& what, std::unique_ptr<Layer>* out) {
  Broadcast<1> s;
  if (!make_strided<1>(dims, st, &s)) return reject(ctx, "more than {} dims after merging", kMaxDims);
  const size_t elem = dtype_size(ctx.outputs[0].dtype);
  const int64_t n = ctx.outputs[0].numel();
  return make_layer(out, "kiln " + what + " strided r" + std::to_string(s.rank), [elem, n, base, s](const LaunchArgs& a) {
    launch_strided_copy(elem, a.inputs[0], a.outputs[0], n, base, s, a.stream);
  });
}

Status build_transpose(LayerBuildContext& ctx, std::unique_ptr<Layer>* out) {
  const std::vector<int64_t>& in = ctx.inputs[0].shape;
  const int r = static_cast<int>(in.size());
  std::vector<int64_t> perm = ctx.node.attr_ints("perm");
  if (perm.empty()) {
    for (int d = r - 1; d >= 0; --d) perm.push_back(d);
  }
  if (static_cast<int>(perm.size()) != r) return reject(ctx, "perm has {} entries for rank {}", perm.size(), r);
  const std::vector<int64_t> in_st = dense_strides(in);
  std::vector<int64_t> dims(r);
  Strides st(r);
  for (int d = 0; d < r; ++d) {
    dims[d] = in[perm[d]];
    st[d][0] = in_st[perm[d]];
  }
  Broadcast<1> s;
  if (!make_strided<1>(dims, st, &s)) return reject(ctx, "more than {} dims after merging", kMaxDims);
  // [B, P, Q] out of a [B, Q, P] input (NCHW <-> NHWC, matrix transposes): the tiled kernel.
  const int m = s.rank;
  const int64_t* D = s.dims;
  const int64_t* S = s.strides[0];
  // A 32x32 tile wastes most of its threads when one side is small (an RGB image going
  // NCHW -> NHWC has 3 channels: 3 of 32 rows used); the strided copy serves those better.
  constexpr int64_t kMinTileSide = 16;
  if (m >= 2 && m <= 3 && S[m - 2] == 1 && S[m - 1] == D[m - 2] && (m == 2 || S[0] == D[1] * D[2]) &&
      (m == 2 || D[0] <= 65535) && D[m - 2] >= kMinTileSide && D[m - 1] >= kMinTileSide) {
    const int64_t batch = m == 3 ? D[0] : 1, p = D[m - 2], q = D[m - 1];
    const size_t elem = dtype_size(ctx.outputs[0].dtype);
    return make_layer(out, "kiln transpose tiled32", [elem, batch, p, q](const LaunchArgs& a) {
      launch_transpose_tiled(elem, a.inputs[0], a.outputs[0], batch, q, p, a.stream);
    });
  }
  return strided_layer(ctx, dims, st, 0, "transpose", out);
}

Status build_slice(LayerBuildContext& ctx, std::unique_ptr<Layer>* out) {
  const std::vector<int64_t>& in = ctx.inputs[0].shape;
  const int r = static_cast<int>(in.size());
  std::vector<int64_t> v[4];  // starts, ends, axes, steps
  for (size_t i = 1; i <= 4; ++i) {
    const bool present = i < ctx.inputs.size() && ctx.inputs[i].present();
    if (present && !constant_ints(ctx, i, &v[i - 1])) return reject(ctx, "slice parameters are not constants");
  }
  std::vector<ops::SliceSpec> specs;
  const Status st = ops::resolve_slice(r, v[0], v[1], v[2], v[3], &specs);
  if (!st.ok()) return st.with_context(ctx.node.describe());
  const std::vector<int64_t> in_st = dense_strides(in);
  std::vector<int64_t> dims = in;
  Strides strides(r);
  for (int d = 0; d < r; ++d) strides[d][0] = in_st[d];
  int64_t base = 0;
  for (const ops::SliceSpec& sp : specs) {
    const ops::SliceRange range = ops::slice_range(in[sp.axis], sp.start, sp.end, sp.step);
    dims[sp.axis] = range.size;
    strides[sp.axis][0] = range.step * in_st[sp.axis];
    base += range.start * in_st[sp.axis];
  }
  if (dims != ctx.outputs[0].shape) return reject(ctx, "slice shape disagrees with inference");
  return strided_layer(ctx, dims, strides, base, "slice", out);
}

Status build_expand(LayerBuildContext& ctx, std::unique_ptr<Layer>* out) {
  const std::vector<int64_t>& o = ctx.outputs[0].shape;
  Broadcast<1> b;
  if (!make_broadcast<1>(o, {ctx.inputs[0].shape}, &b)) return reject(ctx, "rank over 8");
  Strides st(b.rank);
  std::vector<int64_t> dims(b.dims, b.dims + b.rank);
  for (int d = 0; d < b.rank; ++d) st[d][0] = b.strides[0][d];
  return strided_layer(ctx, dims, st, 0, "expand", out);
}

// Tile: each dim d becomes [repeats_d, in_d] with strides [0, stride_d].
Status build_tile(LayerBuildContext& ctx, std::unique_ptr<Layer>* out) {
  const std::vector<int64_t>& in = ctx.inputs[0].shape;
  std::vector<int64_t> reps;
  if (!constant_ints(ctx, 1, &reps) || reps.size() != in.size()) return reject(ctx, "repeats not a constant");
  const std::vector<int64_t> in_st = dense_strides(in);
  std::vector<int64_t> dims;
  Strides st;
  for (size_t d = 0; d < in.size(); ++d) {
    dims.push_back(reps[d]);
    st.push_back({0});
    dims.push_back(in[d]);
    st.push_back({in_st[d]});
  }
  return strided_layer(ctx, dims, st, 0, "tile", out);
}

// Each input is [outer, len_i * inner]: one 2-D copy into its column range of the output.
Status build_concat(LayerBuildContext& ctx, std::unique_ptr<Layer>* out) {
  const std::vector<int64_t>& o = ctx.outputs[0].shape;
  int64_t axis = ctx.node.attr_i("axis", 0);
  if (!normalize_axis(&axis, static_cast<int64_t>(o.size()))) return reject(ctx, "axis out of range");
  const size_t es = dtype_size(ctx.outputs[0].dtype);
  const int64_t outer = product(o, 0, axis), inner = product(o, axis + 1, o.size());
  struct Part {
    size_t input, dst_offset, width;
  };
  std::vector<Part> parts;
  int64_t at = 0;
  for (size_t i = 0; i < ctx.inputs.size(); ++i) {
    if (!ctx.inputs[i].present()) continue;
    const int64_t len = ctx.inputs[i].shape.size() > static_cast<size_t>(axis) ? ctx.inputs[i].shape[axis] : 0;
    if (len * inner > 0) parts.push_back({i, static_cast<size_t>(at * inner) * es, static_cast<size_t>(len * inner) * es});
    at += len;
  }
  const size_t pitch = static_cast<size_t>(at * inner) * es;
  return make_layer(out, "kiln concat memcpy2d x" + std::to_string(parts.size()), [parts, pitch, outer](const LaunchArgs& a) {
    if (outer == 0) return;
    for (const Part& p : parts) {
      char* dst = static_cast<char*>(a.outputs[0]) + p.dst_offset;
      KILN_CUDA_CHECK(cudaMemcpy2DAsync(dst, pitch, a.inputs[p.input], p.width, p.width, static_cast<size_t>(outer),
                                        cudaMemcpyDeviceToDevice, a.stream));
    }
  });
}

Status build_pad(LayerBuildContext& ctx, std::unique_ptr<Layer>* out) {
  const std::vector<int64_t>& in = ctx.inputs[0].shape;
  const std::vector<int64_t>& o = ctx.outputs[0].shape;
  const int r = static_cast<int>(in.size());
  if (r > kMaxDims) return reject(ctx, "rank over {}", kMaxDims);
  ops::PadMode mode;
  Status st = ops::parse_pad_mode(ctx.node.attr_s("mode", "constant"), &mode);
  std::vector<int64_t> pads, axes, begin, end;
  if (!constant_ints(ctx, 1, &pads)) return reject(ctx, "pads not a constant");
  if (ctx.inputs.size() > 3 && ctx.inputs[3].present() && !constant_ints(ctx, 3, &axes)) return reject(ctx, "axes not a constant");
  if (st.ok()) st = ops::resolve_pads(r, pads, axes, &begin, &end);
  if (!st.ok()) return st.with_context(ctx.node.describe());
  AxisGather g;
  g.rank = r;
  const bool has_value = ctx.inputs.size() > 2 && ctx.inputs[2].present() && ctx.inputs[2].numel() > 0;
  if (has_value) {
    const Tensor* v = constant_input(ctx, 2);
    if (v == nullptr) return reject(ctx, "constant_value not a constant");
    const Tensor fill = v->to(ctx.inputs[0].dtype);
    std::memcpy(&g.fill, fill.data(), dtype_size(fill.dtype()));
  }
  const size_t elem = dtype_size(ctx.outputs[0].dtype);
  bool last_axis_only = mode == ops::PadMode::kConstant && g.fill == 0 && r >= 1 && end[r - 1] > 0;
  for (int k = 0; k < r; ++k) last_axis_only = last_axis_only && begin[k] == 0 && (k == r - 1 || end[k] == 0);
  if (last_axis_only) {
    const int64_t c = in[r - 1], c_pad = o[r - 1], rows = c == 0 ? 0 : ctx.inputs[0].numel() / c;
    return make_layer(out, "kiln pad last axis", [elem, rows, c, c_pad](const LaunchArgs& a) {
      launch_pad_last_axis(elem, a.inputs[0], a.outputs[0], rows, c, c_pad, a.stream);
    });
  }
  const std::vector<int64_t> in_st = dense_strides(in);
  std::vector<int64_t> tables;
  for (int k = 0; k < r; ++k) {
    g.dims[k] = o[k];
    g.table_start[k] = static_cast<int64_t>(tables.size());
    for (int64_t i = 0; i < o[k]; ++i) {
      const int64_t src = in[k] == 0 ? -1 : ops::pad_source_index(mode, i - begin[k], in[k]);
      tables.push_back(src < 0 ? -1 : src * in_st[k]);
    }
  }
  const auto buf = upload(tables);
  const int64_t n = ctx.outputs[0].numel();
  return make_layer(
      out, "kiln pad axis-tables",
      [elem, n, g, buf](const LaunchArgs& a) {
        launch_axis_gather(elem, a.inputs[0], a.outputs[0], n, g, static_cast<const int64_t*>(buf->data()), a.stream);
      },
      false, buf->bytes());
}

Status build_gather(LayerBuildContext& ctx, std::unique_ptr<Layer>* out) {
  const std::vector<int64_t>& data = ctx.inputs[0].shape;
  int64_t axis = ctx.node.attr_i("axis", 0);
  if (!normalize_axis(&axis, static_cast<int64_t>(data.size()))) return reject(ctx, "axis out of range");
  const DType it = ctx.inputs[1].dtype;
  if (!gather_index_supported(it)) return reject(ctx, "indices of {}", dtype_name(it));
  const int64_t outer = product(data, 0, axis), len = data[axis], inner = product(data, axis + 1, data.size());
  const int64_t count = ctx.inputs[1].numel();
  const size_t elem = dtype_size(ctx.outputs[0].dtype);
  return make_layer(out, "kiln gather", [=](const LaunchArgs& a) {
    launch_gather(elem, it, a.inputs[0], a.inputs[1], a.outputs[0], outer, len, count, inner, a.stream);
  });
}

Status build_alias(LayerBuildContext& ctx, std::unique_ptr<Layer>* out) {
  if (ctx.outputs[0].bytes() != ctx.inputs[0].bytes()) return reject(ctx, "output size differs from input");
  const size_t bytes = ctx.outputs[0].bytes();
  return make_layer(
      out, "kiln alias (copy when not aliased)",
      [bytes](const LaunchArgs& a) { launch_copy(a.inputs[0], a.outputs[0], bytes, a.stream); }, true);
}

}  // namespace

void register_movement_layers(LayerRegistry& r) {
  r.add("", "Transpose", build_transpose);
  r.add("", "Slice", build_slice);
  r.add("", "Expand", build_expand);
  r.add("", "Tile", build_tile);
  r.add("", "Concat", build_concat);
  r.add("", "Pad", build_pad);
  r.add("", "Gather", build_gather);
  for (const char* op : {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity"}) r.add("", op, build_alias);
}

}  // namespace kiln::gpu::kern
