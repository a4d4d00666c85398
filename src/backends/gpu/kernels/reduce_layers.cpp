// Layer factories of the reductions: Reduce* over any axes (ops::resolve_reduce_axes, as on the
// CPU), split into kept and reduced dims with their input strides; ArgMax/ArgMin.
#include "backends/gpu/kernels/layer_util.h"
#include "backends/gpu/kernels/reduce.h"
#include "backends/gpu/kernels/registry.h"
#include "ops/reduce.h"

namespace kiln::gpu::kern {
namespace {

bool reduce_op_of(const std::string& name, ReduceOp* op) {
  static const std::pair<const char*, ReduceOp> kOps[] = {
      {"ReduceSum", ReduceOp::kSum}, {"ReduceMean", ReduceOp::kMean}, {"ReduceMax", ReduceOp::kMax},
      {"ReduceMin", ReduceOp::kMin}, {"ReduceProd", ReduceOp::kProd}, {"ReduceL1", ReduceOp::kL1},
      {"ReduceL2", ReduceOp::kL2},   {"ReduceSumSquare", ReduceOp::kSumSquare}};
  for (const auto& [n, o] : kOps) {
    if (name == n) {
      *op = o;
      return true;
    }
  }
  return false;
}

Status build_reduce(LayerBuildContext& ctx, std::unique_ptr<Layer>* out) {
  const TensorDesc& x = ctx.inputs[0];
  if (!reduce_supported(x.dtype)) return reject(ctx, "no GPU reduction for {}", dtype_name(x.dtype));
  ReducePlan p;
  if (!reduce_op_of(ctx.node.op_type, &p.op)) return reject(ctx, "unknown reduction");
  const bool axes_input = ctx.inputs.size() > 1 && ctx.inputs[1].present();
  const Tensor* axes = axes_input ? constant_input(ctx, 1) : nullptr;
  if (axes_input && axes == nullptr) return reject(ctx, "axes not a constant");
  ops::ReduceAxes ra;
  const int r = static_cast<int>(x.shape.size());
  const Status st = ops::resolve_reduce_axes(ctx.node, axes != nullptr && axes->numel() > 0 ? axes : nullptr, r, &ra);
  if (!st.ok()) return st.with_context(ctx.node.describe());
  if (ra.noop) return reject(ctx, "no-op reduction");  // rare; the CPU copies it
  const std::vector<int64_t> in_st = dense_strides(x.shape);
  std::vector<int64_t> kd, rd;
  std::vector<std::array<int64_t, 1>> ks, rs;
  for (int d = 0; d < r; ++d) {
    (ra.reduced[d] ? rd : kd).push_back(x.shape[d]);
    (ra.reduced[d] ? rs : ks).push_back({in_st[d]});
  }
  if (!make_strided<1>(kd, ks, &p.kept) || !make_strided<1>(rd, rs, &p.red)) return reject(ctx, "rank over 8");
  p.outputs = product(kd, 0, kd.size());
  p.count = product(rd, 0, rd.size());
  p.contiguous = p.red.rank == 0 || (p.red.rank == 1 && p.red.strides[0][0] == 1);
  if (p.count == 0) return reject(ctx, "empty reduction");  // identity values: CPU
  const DType t = x.dtype;
  return make_layer(out, std::string("kiln ") + ctx.node.op_type + (p.contiguous ? " warp" : " thread"),
                    [t, p](const LaunchArgs& a) { launch_reduce(t, p, a.inputs[0], a.outputs[0], a.stream); });
}

Status build_arg_reduce(LayerBuildContext& ctx, std::unique_ptr<Layer>* out) {
  const TensorDesc& x = ctx.inputs[0];
  if (!reduce_supported(x.dtype)) return reject(ctx, "no GPU kernel for {}", dtype_name(x.dtype));
  int64_t axis = ctx.node.attr_i("axis", 0);
  if (!normalize_axis(&axis, static_cast<int64_t>(x.shape.size()))) return reject(ctx, "axis out of range");
  const int64_t outer = product(x.shape, 0, axis), len = x.shape[axis], inner = product(x.shape, axis + 1, x.shape.size());
  if (len == 0) return reject(ctx, "empty axis");
  const bool is_max = ctx.node.op_type == "ArgMax", last = ctx.node.attr_i("select_last_index", 0) != 0;
  const DType t = x.dtype;
  return make_layer(out, "kiln " + ctx.node.op_type, [=](const LaunchArgs& a) {
    launch_arg_reduce(t, is_max, last, outer, len, inner, a.inputs[0], static_cast<int64_t*>(a.outputs[0]), a.stream);
  });
}

}  // namespace

void register_reduce_layers(LayerRegistry& r) {
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
                         "ReduceSumSquare"}) {
    r.add("", op, build_reduce);
  }
  r.add("", "ArgMax", build_arg_reduce);
  r.add("", "ArgMin", build_arg_reduce);
}

}  // namespace kiln::gpu::kern
