// Layer factories of the elementwise family: unary and binary ops, Clip, Cast/CastLike, Where.
// Everything is decided here at build time (op code, parameters, kernel shape); enqueue is
// one launch.
#include <cmath>
#include <limits>

#include "backends/gpu/kernels/elementwise.h"
#include "backends/gpu/kernels/ew_build.h"
#include "backends/gpu/kernels/layer_util.h"
#include "backends/gpu/kernels/registry.h"
#include "core/dispatch.h"
#include "core/numeric.h"

namespace kiln::gpu::kern {

bool ew_op_from_name(const std::string& name, EwOp* op, EwKind* kind) {
  struct Entry {
    const char* name;
    EwOp op;
    EwKind kind;
  };
  static const Entry kTable[] = {
#define KILN_ENTRY(n, cat) {#n, EwOp::k##n, EwKind::cat},
#define KILN_FU(n) KILN_ENTRY(n, kFloatUnary)
#define KILN_NU(n) KILN_ENTRY(n, kNumUnary)
#define KILN_BU(n) KILN_ENTRY(n, kBoolUnary)
#define KILN_FB(n) KILN_ENTRY(n, kFloatBinary)
#define KILN_NB(n) KILN_ENTRY(n, kNumBinary)
#define KILN_CB(n) KILN_ENTRY(n, kCompare)
#define KILN_BB(n) KILN_ENTRY(n, kBoolBinary)
      KILN_EW_FLOAT_UNARY(KILN_FU) KILN_EW_NUM_UNARY(KILN_NU) KILN_EW_BOOL_UNARY(KILN_BU)
      KILN_EW_FLOAT_BINARY(KILN_FB) KILN_EW_NUM_BINARY(KILN_NB) KILN_EW_COMPARE(KILN_CB) KILN_EW_BOOL_BINARY(KILN_BB)
#undef KILN_ENTRY
  };
  for (const Entry& e : kTable) {
    if (name == e.name) {
      *op = e.op;
      *kind = e.kind;
      return true;
    }
  }
  return false;
}

bool make_ew_shape(const std::vector<int64_t>& out, const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                   EwShape* s) {
  s->n = product(out, 0, out.size());
  const int64_t na = product(a, 0, a.size());
  const int64_t nb = product(b, 0, b.size());
  // An operand with as many elements as the output has its shape (broadcasting only adds 1s).
  s->a_scalar = na == 1 && s->n != 1;
  s->b_scalar = nb == 1 && s->n != 1;
  s->contiguous = (na == s->n || s->a_scalar) && (nb == s->n || s->b_scalar);
  if (s->contiguous) return true;
  return make_broadcast<2>(out, {a, b}, &s->bc);
}

namespace {

// Rounds a bound to the input's type first, as the CPU reference compares in that type.
double round_to(DType t, double v) {
  if (std::isinf(v)) return v;
  if (t == DType::kFloat16) return static_cast<float>(float16(static_cast<float>(v)));
  if (t == DType::kBFloat16) return static_cast<float>(bfloat16(static_cast<float>(v)));
  if (t == DType::kFloat32) return static_cast<float>(v);
  return v;
}

bool scalar_value(const Tensor* t, double* v) {
  if (t == nullptr || t->numel() != 1) return false;
  return dispatch<NumericTypes>(t->dtype(), [&](auto tag) { *v = convert<double>(*t->data_as<typename decltype(tag)::type>()); });
}

Status clip_params(const ir::Node& n, DType t, const Tensor* min, const Tensor* max, bool min_present, bool max_present,
                   EwParams* p) {
  double lo = -std::numeric_limits<double>::infinity(), hi = std::numeric_limits<double>::infinity();
  if (t == DType::kInt32) {
    lo = std::numeric_limits<int32_t>::lowest();
    hi = std::numeric_limits<int32_t>::max();
  } else if (t == DType::kInt64) {
    lo = static_cast<double>(std::numeric_limits<int64_t>::lowest());
    hi = static_cast<double>(std::numeric_limits<int64_t>::max());  // saturates back on the device
  }
  if (n.has_attr("min")) lo = n.attr_f("min", 0);  // opset < 11
  if (n.has_attr("max")) hi = n.attr_f("max", 0);
  double v = 0;
  if (min_present) {
    if (!scalar_value(min, &v)) return unsupported("Clip min is not a constant scalar");
    lo = round_to(t, v);
  }
  if (max_present) {
    if (!scalar_value(max, &v)) return unsupported("Clip max is not a constant scalar");
    hi = round_to(t, v);
  }
  p->p0 = lo;
  p->p1 = hi;
  return Status::OK();
}

}  // namespace

bool ew_op_of(const ir::Node& n, EwOp* op, EwKind* kind) {
  if (!n.domain.empty()) return false;
  std::string name = n.op_type;
  if (name == "Sum") name = "Add";
  if (name == "Gelu" && n.attr_s("approximate", "none") == "tanh") name = "GeluTanh";
  if (name == "GeluTanh" && n.op_type != "Gelu") return false;
  return ew_op_from_name(name, op, kind);
}

Status ew_params_of(const ir::Node& n, EwOp op, DType t, const Tensor* min, const Tensor* max, bool min_present,
                    bool max_present, EwParams* p) {
  switch (op) {
    case EwOp::kLeakyRelu: p->p0 = n.attr_f("alpha", 0.01f); break;
    case EwOp::kElu:
    case EwOp::kCelu:
    case EwOp::kSwish:
    case EwOp::kThresholdedRelu: p->p0 = n.attr_f("alpha", 1.0f); break;
    case EwOp::kSelu:
      p->p0 = n.attr_f("alpha", 1.67326319217681884765625f);
      p->p1 = n.attr_f("gamma", 1.05070102214813232421875f);
      break;
    case EwOp::kHardSigmoid:
      p->p0 = n.attr_f("alpha", 0.2f);
      p->p1 = n.attr_f("beta", 0.5f);
      break;
    case EwOp::kClip: return clip_params(n, t, min, max, min_present, max_present, p);
    default: break;
  }
  return Status::OK();
}

namespace {

std::string shape_tactic(const EwShape& s) {
  if (!s.contiguous) return "broadcast r" + std::to_string(s.bc.rank);
  return s.a_scalar || s.b_scalar ? "scalar-operand vec16" : "same-shape vec16";
}

// Unary and binary ops of the EwOp table (and Sum/Max/Min with two inputs).
Status build_ew(LayerBuildContext& ctx, std::unique_ptr<Layer>* out) {
  const ir::Node& n = ctx.node;
  EwOp op;
  EwKind kind;
  if (!ew_op_of(n, &op, &kind)) return reject(ctx, "no GPU elementwise op");
  const std::string name = n.op_type;
  const int arity = ew_arity(kind);
  size_t present = 0;
  for (const TensorDesc& d : ctx.inputs) present += d.present() ? 1 : 0;
  if (op == EwOp::kClip) present = 1;
  if (static_cast<int>(present) != arity) return reject(ctx, "{} inputs (the GPU kernel takes {})", present, arity);
  const DType t = ctx.inputs[0].dtype;
  if (arity == 2 && ctx.inputs[1].dtype != t) return reject(ctx, "mixed input dtypes");
  if (!ew_supported(op, t)) return reject(ctx, "no GPU kernel for {}", dtype_name(t));
  EwParams p;
  auto has = [&](size_t i) { return i < ctx.inputs.size() && ctx.inputs[i].present(); };
  const Status st = ew_params_of(n, op, t, constant_input(ctx, 1), constant_input(ctx, 2), has(1), has(2), &p);
  if (!st.ok()) return st.with_context(n.describe());
  EwShape s;
  const std::vector<int64_t> b_shape = arity == 2 ? ctx.inputs[1].shape : std::vector<int64_t>{};
  if (!make_ew_shape(ctx.outputs[0].shape, ctx.inputs[0].shape, b_shape, &s)) return reject(ctx, "rank over 8");
  const bool in_place = ctx.inputs[0].shape == ctx.outputs[0].shape && ctx.outputs[0].dtype == t;
  return make_layer(
      out, "kiln eltwise " + name + " " + shape_tactic(s),
      [op, t, s, p](const LaunchArgs& a) {
        launch_ew(op, t, a.inputs[0], a.inputs.size() > 1 ? a.inputs[1] : nullptr, a.outputs[0], s, p, a.stream);
      },
      in_place);
}

Status build_cast(LayerBuildContext& ctx, std::unique_ptr<Layer>* out) {
  const DType from = ctx.inputs[0].dtype, to = ctx.outputs[0].dtype;
  if (!cast_supported(from, to)) return reject(ctx, "no GPU cast {} -> {}", dtype_name(from), dtype_name(to));
  const int64_t n = ctx.outputs[0].numel();
  return make_layer(out, std::string("kiln cast ") + dtype_name(from) + "->" + dtype_name(to),
                    [from, to, n](const LaunchArgs& a) { launch_cast(from, to, a.inputs[0], a.outputs[0], n, a.stream); },
                    dtype_size(from) == dtype_size(to));
}

Status build_where(LayerBuildContext& ctx, std::unique_ptr<Layer>* out) {
  const DType t = ctx.outputs[0].dtype;
  if (ctx.inputs[0].dtype != DType::kBool || !where_supported(t)) return reject(ctx, "no GPU Where for {}", dtype_name(t));
  Broadcast<3> bc;
  if (!make_broadcast<3>(ctx.outputs[0].shape, {ctx.inputs[0].shape, ctx.inputs[1].shape, ctx.inputs[2].shape}, &bc)) {
    return reject(ctx, "rank over 8");
  }
  const int64_t n = ctx.outputs[0].numel();
  return make_layer(out, "kiln where", [t, n, bc](const LaunchArgs& a) {
    launch_where(t, a.inputs[0], a.inputs[1], a.inputs[2], a.outputs[0], n, bc, a.stream);
  });
}

}  // namespace

void register_elementwise_layers(LayerRegistry& r) {
  static const char* kOps[] = {
#define KILN_NAME(n) #n,
      KILN_EW_FLOAT_UNARY(KILN_NAME) KILN_EW_NUM_UNARY(KILN_NAME) KILN_EW_BOOL_UNARY(KILN_NAME)
      KILN_EW_FLOAT_BINARY(KILN_NAME) KILN_EW_NUM_BINARY(KILN_NAME) KILN_EW_COMPARE(KILN_NAME)
      KILN_EW_BOOL_BINARY(KILN_NAME)
#undef KILN_NAME
  };
  for (const char* op : kOps) {
    const std::string name = op;
    if (name == "GeluTanh" || name == "Identity") continue;  // Gelu's attribute; Identity is a copy layer
    r.add("", name, build_ew);
  }
  r.add("", "Sum", build_ew);
  r.add("", "Cast", build_cast);
  r.add("", "CastLike", build_cast);
  r.add("", "Where", build_where);
}

}  // namespace kiln::gpu::kern
