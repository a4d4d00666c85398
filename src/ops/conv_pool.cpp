// Convolution and pooling ops: schemas (attributes, shape inference, cost). The window
// arithmetic lives in conv_pool.h so kernels of every backend agree with inference.
#include "ops/conv_pool.h"

#include "core/error.h"
#include "ops/op_schema.h"
#include "ops/shape_util.h"

namespace kiln::ops {

namespace {

const std::initializer_list<DType> kFloatDTypes = {DType::kFloat32, DType::kFloat64, DType::kFloat16,
                                                   DType::kBFloat16};

int64_t dim_value(const ir::TensorType& t, int i) {
  return (*t.shape)[i].known() ? (*t.shape)[i].value : -1;
}

// Spatial sizes of an [N, C, spatial...] type, -1 where unknown.
std::vector<int64_t> spatial_of(const ir::TensorType& t) {
  std::vector<int64_t> s;
  for (int i = 2; i < t.rank(); ++i) s.push_back(dim_value(t, i));
  return s;
}

// [N, C, out...] with unknown entries left unknown.
std::vector<ir::Dim> nc_spatial(const ir::Dim& n, const ir::Dim& c, const std::vector<int64_t>& out) {
  std::vector<ir::Dim> dims{n, c};
  for (int64_t v : out) dims.push_back(v >= 0 ? ir::Dim(v) : ir::Dim());
  return dims;
}

bool all_known(const std::vector<int64_t>& v) {
  for (int64_t x : v) {
    if (x < 0) return false;
  }
  return true;
}

double product(const std::vector<int64_t>& v, size_t from = 0) {
  double p = 1;
  for (size_t i = from; i < v.size(); ++i) p *= static_cast<double>(v[i]);
  return p;
}

double bytes_of(const ir::TensorType* t) {
  return t ? product(t->concrete()) * static_cast<double>(dtype_size(t->dtype)) : 0.0;
}

// Bytes read and written: every input (weights included) plus every output.
double io_bytes(const CostContext& c) {
  double b = 0;
  for (const auto* t : c.input_types) b += bytes_of(t);
  for (const auto* t : c.output_types) b += bytes_of(t);
  return b;
}

// Checks X (input 0) is [N, C, spatial...] with at least one spatial dim; false when its rank
// is unknown (the caller then leaves the output rank unknown).
Status check_nc_input(const InferContext& ctx, bool* has_rank) {
  const ir::TensorType& x = ctx.input_type(0);
  *has_rank = x.has_rank();
  if (*has_rank) {
    KILN_ENSURE(x.rank() >= 3, "input X has rank {}, expected [N, C, spatial...] with rank >= 3", x.rank());
  }
  return Status::OK();
}

// The optional bias (input `slot`) is [C_out].
Status check_bias(const InferContext& ctx, int slot, const ir::Dim& m) {
  if (slot < 0 || !ctx.has_input(slot) || !ctx.input_type(slot).has_rank()) return Status::OK();
  const ir::TensorType& b = ctx.input_type(slot);
  KILN_ENSURE(b.rank() == 1, "bias B has rank {}, expected 1", b.rank());
  KILN_ENSURE(!m.known() || !(*b.shape)[0].known() || (*b.shape)[0].value == m.value,
              "bias B has {} entries, expected {}", (*b.shape)[0].value, m.value);
  return Status::OK();
}

// --- Conv -------------------------------------------------------------------------------------

// Conv and ConvTranspose share the kernel-size lookup: kernel_shape, else W's spatial dims.
std::vector<int64_t> conv_kernel(const WindowAttrs& a, const ir::TensorType& w) {
  if (!a.kernel.empty()) return a.kernel;
  std::vector<int64_t> k(a.nsp, -1);
  if (w.rank() == a.nsp + 2) k = spatial_of(w);
  return k;
}

}  // namespace

Cost conv_cost(const CostContext& c, int w_slot) {
  // MACs = N * C_out * prod(out spatial) * (C_in / group) * prod(kernel); W is [C_out, C_in/group, k...].
  const std::vector<int64_t> w = c.input_types[w_slot]->concrete();
  const std::vector<int64_t> y = c.output_types[0]->concrete();
  Cost cost;
  cost.macs = product(y) * product(w, 1);
  cost.bytes = io_bytes(c);
  return cost;
}

Status infer_conv_shape(InferContext& ctx, int w_slot, int b_slot, DType out_dtype) {
  const ir::TensorType& x = ctx.input_type(0);
  const ir::TensorType& w = ctx.input_type(w_slot);
  const int rank = x.has_rank() ? x.rank() : w.rank();
  if (rank < 0) {
    set_output(ctx, 0, out_dtype, std::nullopt);
    return Status::OK();
  }
  KILN_ENSURE(rank >= 3, "X has rank {}, expected [N, C, spatial...] with rank >= 3", rank);
  KILN_ENSURE(!w.has_rank() || w.rank() == rank, "W has rank {}, expected {} like X", w.rank(), rank);
  const int64_t group = ctx.node.attr_i("group", 1);
  KILN_ENSURE(group >= 1, "group {} must be >= 1", group);

  WindowAttrs a;
  KILN_RETURN_IF_ERROR(read_window_attrs(ctx.node, rank - 2, &a));
  const ir::Dim m = w.has_rank() ? (*w.shape)[0] : ir::Dim();
  if (x.has_rank() && w.has_rank()) {
    const int64_t c = dim_value(x, 1), cg = dim_value(w, 1);
    KILN_ENSURE(c < 0 || c % group == 0, "X has {} channels, not divisible by group {}", c, group);
    KILN_ENSURE(c < 0 || cg < 0 || c / group == cg,
                "W has {} input channels per group, expected {} ({} / group {})", cg, c / group, c, group);
    KILN_ENSURE(!m.known() || m.value % group == 0, "W has {} output channels, not divisible by group {}",
                m.value, group);
    const std::vector<int64_t> wk = spatial_of(w);
    for (int d = 0; d < static_cast<int>(a.kernel.size()); ++d) {
      KILN_ENSURE(wk[d] < 0 || wk[d] == a.kernel[d], "kernel_shape {} disagrees with W's spatial dim {}",
                  a.kernel[d], wk[d]);
    }
  }
  KILN_RETURN_IF_ERROR(check_bias(ctx, b_slot, m));

  const std::vector<int64_t> kernel = conv_kernel(a, w);
  std::vector<int64_t> out(a.nsp, -1);
  if (all_known(kernel)) {
    Window win;
    KILN_RETURN_IF_ERROR(resolve_window(a, kernel, x.has_rank() ? spatial_of(x) : out, &win));
    for (int64_t o : win.out) KILN_ENSURE(o != 0, "output would be empty (input too small for the kernel)");
    out = win.out;
  }
  const ir::Dim n = x.has_rank() ? (*x.shape)[0] : ir::Dim();
  set_output(ctx, 0, out_dtype, nc_spatial(n, m, out));
  return Status::OK();
}

namespace {

Status infer_conv(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(expect_dtype(ctx, 0, kFloatDTypes));
  const DType t = ctx.input_type(0).dtype;
  KILN_ENSURE(ctx.input_type(1).dtype == t, "W has dtype {}, expected {} like X",
              dtype_name(ctx.input_type(1).dtype), dtype_name(t));
  KILN_ENSURE(!ctx.has_input(2) || ctx.input_type(2).dtype == t, "bias B has dtype {}, expected {} like X",
              dtype_name(ctx.input_type(2).dtype), dtype_name(t));
  return infer_conv_shape(ctx, 1, 2, t);
}

// --- ConvTranspose ----------------------------------------------------------------------------

Status infer_conv_transpose(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(expect_dtype(ctx, 0, kFloatDTypes));
  const ir::TensorType& x = ctx.input_type(0);
  const ir::TensorType& w = ctx.input_type(1);
  KILN_ENSURE(w.dtype == x.dtype, "W has dtype {}, expected {} like X", dtype_name(w.dtype),
              dtype_name(x.dtype));
  const int rank = x.has_rank() ? x.rank() : w.rank();
  if (rank < 0) {
    set_output(ctx, 0, x.dtype, std::nullopt);
    return Status::OK();
  }
  KILN_ENSURE(rank >= 3, "X has rank {}, expected [N, C, spatial...] with rank >= 3", rank);
  KILN_ENSURE(!w.has_rank() || w.rank() == rank, "W has rank {}, expected {} like X", w.rank(), rank);
  const int64_t group = ctx.node.attr_i("group", 1);
  KILN_ENSURE(group >= 1, "group {} must be >= 1", group);

  WindowAttrs a;
  KILN_RETURN_IF_ERROR(read_window_attrs(ctx.node, rank - 2, &a));
  // W is [C_in, C_out/group, k...]; the output has C_out = W.dim1 * group channels.
  ir::Dim m;
  if (w.has_rank()) {
    const int64_t mg = dim_value(w, 1);
    if (mg >= 0) m = ir::Dim(mg * group);
    const int64_t c = x.has_rank() ? dim_value(x, 1) : -1, wc = dim_value(w, 0);
    KILN_ENSURE(c < 0 || wc < 0 || c == wc, "W has {} input channels, expected {} like X", wc, c);
    KILN_ENSURE(c < 0 || c % group == 0, "X has {} channels, not divisible by group {}", c, group);
  }
  KILN_ENSURE(!ctx.has_input(2) || ctx.input_type(2).dtype == x.dtype,
              "bias B has dtype {}, expected {} like X", dtype_name(ctx.input_type(2).dtype),
              dtype_name(x.dtype));
  KILN_RETURN_IF_ERROR(check_bias(ctx, 2, m));
  const std::vector<int64_t> kernel = conv_kernel(a, w);
  std::vector<int64_t> out(a.nsp, -1);
  if (all_known(kernel)) {
    Window win;
    KILN_RETURN_IF_ERROR(resolve_transpose_window(a, kernel, x.has_rank() ? spatial_of(x) : out, &win));
    out = win.out;
  } else if (!a.output_shape.empty()) {
    out = a.output_shape;
  }
  const ir::Dim n = x.has_rank() ? (*x.shape)[0] : ir::Dim();
  set_output(ctx, 0, x.dtype, nc_spatial(n, m, out));
  return Status::OK();
}

Cost conv_transpose_cost(const CostContext& c) {
  // Every input element meets every weight of its group: N * C_in * prod(in spatial) * (C_out/group) *
  // prod(k).
  const std::vector<int64_t> x = c.input_types[0]->concrete();
  const std::vector<int64_t> w = c.input_types[1]->concrete();
  Cost cost;
  cost.macs = product(x) * product(w, 1);
  cost.bytes = io_bytes(c);
  return cost;
}

// --- Pooling ----------------------------------------------------------------------------------

// Shared by MaxPool, AveragePool and LpPool: kernel_shape is required.
Status infer_pool(InferContext& ctx, std::initializer_list<DType> dtypes) {
  KILN_RETURN_IF_ERROR(expect_dtype(ctx, 0, dtypes));
  const ir::TensorType& x = ctx.input_type(0);
  bool has_rank = false;
  KILN_RETURN_IF_ERROR(check_nc_input(ctx, &has_rank));
  for (int i = 0; i < ctx.num_outputs(); ++i) {
    set_output(ctx, i, i == 0 ? x.dtype : DType::kInt64, std::nullopt);
  }
  KILN_ENSURE(ctx.node.has_attr("kernel_shape"), "attribute kernel_shape is required");
  if (!has_rank) return Status::OK();
  WindowAttrs a;
  KILN_RETURN_IF_ERROR(read_window_attrs(ctx.node, x.rank() - 2, &a));
  Window win;
  KILN_RETURN_IF_ERROR(resolve_window(a, a.kernel, spatial_of(x), &win));
  for (int i = 0; i < ctx.num_outputs(); ++i) {
    set_output(ctx, i, i == 0 ? x.dtype : DType::kInt64, nc_spatial((*x.shape)[0], (*x.shape)[1], win.out));
  }
  return Status::OK();
}

Status infer_global_pool(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(expect_dtype(ctx, 0, kFloatDTypes));
  const ir::TensorType& x = ctx.input_type(0);
  bool has_rank = false;
  KILN_RETURN_IF_ERROR(check_nc_input(ctx, &has_rank));
  if (!has_rank) {
    set_output(ctx, 0, x.dtype, std::nullopt);
    return Status::OK();
  }
  set_output(ctx, 0, x.dtype,
             nc_spatial((*x.shape)[0], (*x.shape)[1], std::vector<int64_t>(x.rank() - 2, 1)));
  return Status::OK();
}

// One operation per window element: the input is read once per window it falls in.
Cost pool_cost(const CostContext& c) {
  Cost cost;
  const double out = product(c.output_types[0]->concrete());
  const std::vector<int64_t> k = c.node.attr_ints("kernel_shape");
  cost.flops = out * product(k);
  cost.bytes = io_bytes(c);
  return cost;
}

Cost global_pool_cost(const CostContext& c) {
  Cost cost;
  cost.flops = product(c.input_types[0]->concrete());
  cost.bytes = io_bytes(c);
  return cost;
}

Status canonicalize_max_pool(ir::Node& node, ir::Graph&) {
  const int64_t order = node.attr_i("storage_order", 0);
  KILN_ENSURE(order == 0 || order == 1, "storage_order {} must be 0 (row major) or 1 (column major)", order);
  return Status::OK();
}

// LpPool-1 has a float attribute p; later opsets an int. Keep the int form.
Status canonicalize_lp_pool(ir::Node& node, ir::Graph&) {
  const ir::Attribute* p = node.attr("p");
  if (p && p->kind == ir::Attribute::Kind::kFloat) {
    ir::Attribute ip;
    ip.kind = ir::Attribute::Kind::kInt;
    ip.i = static_cast<int64_t>(p->f);
    KILN_ENSURE(static_cast<float>(ip.i) == p->f, "LpPool p = {} is not an integer; kiln supports integer p",
                p->f);
    node.attrs["p"] = ip;
  }
  KILN_ENSURE(node.attr_i("p", 2) >= 1, "p {} must be >= 1", node.attr_i("p", 2));
  return Status::OK();
}

const std::vector<std::string> kWindowAttrs = {"auto_pad", "kernel_shape", "strides", "dilations", "pads"};

std::vector<std::string> with_window_attrs(std::vector<std::string> extra) {
  extra.insert(extra.end(), kWindowAttrs.begin(), kWindowAttrs.end());
  return extra;
}

}  // namespace

void register_conv_pool_ops(OpRegistry& r) {
  register_conv_quant_ops(r);
  r.add({.op_type = "Conv",
         .attributes = with_window_attrs({"group"}),
         .infer = infer_conv,
         .cost = [](const CostContext& c) { return conv_cost(c, 1); }});
  r.add({.op_type = "ConvTranspose",
         .attributes = with_window_attrs({"group", "output_padding", "output_shape"}),
         .infer = infer_conv_transpose,
         .cost = conv_transpose_cost});
  r.add({.op_type = "MaxPool",
         .attributes = with_window_attrs({"ceil_mode", "storage_order"}),
         .canonicalize = canonicalize_max_pool,
         .infer =
             [](InferContext& ctx) {
               return infer_pool(ctx, {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
                                       DType::kInt8, DType::kUInt8});
             },
         .cost = pool_cost});
  r.add({.op_type = "AveragePool",
         .attributes = with_window_attrs({"ceil_mode", "count_include_pad"}),
         .infer = [](InferContext& ctx) { return infer_pool(ctx, kFloatDTypes); },
         .cost = pool_cost});
  r.add({.op_type = "LpPool",
         .attributes = with_window_attrs({"ceil_mode", "p"}),
         .canonicalize = canonicalize_lp_pool,
         .infer = [](InferContext& ctx) { return infer_pool(ctx, kFloatDTypes); },
         .cost = pool_cost});
  for (const char* op : {"GlobalAveragePool", "GlobalMaxPool"}) {
    r.add({.op_type = op, .attributes = {}, .infer = infer_global_pool, .cost = global_pool_cost});
  }
  r.add({.op_type = "GlobalLpPool",
         .attributes = {"p"},
         .canonicalize = canonicalize_lp_pool,
         .infer = infer_global_pool,
         .cost = global_pool_cost});
}

}  // namespace kiln::ops
