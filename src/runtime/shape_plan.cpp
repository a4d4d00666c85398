#include "runtime/shape_plan.h"

#include <set>

#include "core/error.h"
#include "ops/op_schema.h"
#include "runtime/node_eval.h"

namespace kiln::runtime {
namespace {

// Host evaluation at build is for shape arithmetic and small constant subgraphs the optimizer
// left; big ones would cost host memory and build time better spent on the GPU.
constexpr int64_t kMaxFoldElements = 1 << 20;
constexpr int64_t kMaxShapeTensorElements = 256;
// While looking for shape tensors, values computed from graph inputs are evaluated only when
// this small: shape arithmetic is, and it keeps a network fed by token ids off the CPU.
constexpr int64_t kMaxTaintedElements = 4096;

using InputSet = std::set<int>;

bool has_graph_attr(const ir::Node& n) {
  for (const auto& [k, a] : n.attrs) {
    if (a.g) return true;
  }
  return false;
}

// Ops whose graph attributes are subgraphs to run (a kiln.FusedElementwise body is not: the op
// interprets it, on either backend).
bool is_control_flow(const ir::Node& n) {
  return n.domain.empty() && (n.op_type == "If" || n.op_type == "Loop" || n.op_type == "Scan");
}

// Float inputs whose values decide an output shape (or that inference needs to decide it):
// (op, input index), -1 for every input.
bool is_float_shape_operand(const ir::Node& n, const ir::Value* v) {
  static const std::pair<const char*, int> kOperands[] = {{"Resize", 1}, {"Resize", 2}, {"Upsample", 1}, {"Range", -1}};
  if (!n.domain.empty()) return false;
  for (const auto& [op, index] : kOperands) {
    if (n.op_type != op) continue;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      if (n.inputs[i] == v && (index < 0 || static_cast<size_t>(index) == i)) return true;
    }
  }
  return false;
}

bool same_types(const std::vector<ir::TensorType>& a, const std::vector<ir::TensorType>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].dtype != b[i].dtype || !b[i].is_concrete() || a[i].concrete() != b[i].concrete()) return false;
  }
  return true;
}

// One walk over a graph in node order. With `track` set it also follows which graph inputs each
// host-known value derives from ("taint"), and collects in `needed` the inputs whose values
// some output shape depends on.
class Planner {
 public:
  Planner(ConcreteTypes* out, bool track) : out_(out), track_(track) {}

  void seed(const ir::Graph& g, const std::vector<ir::TensorType>& types, const std::vector<const Tensor*>& values) {
    KILN_ASSERT(types.size() == g.inputs.size() && values.size() == g.inputs.size(),
                "{} input types and {} values for {} inputs", types.size(), values.size(), g.inputs.size());
    for (size_t i = 0; i < g.inputs.size(); ++i) {
      out_->types[g.inputs[i]] = types[i];
      if (!values[i]) continue;
      out_->folded[g.inputs[i]] = *values[i];
      if (track_) taint_[g.inputs[i]] = {static_cast<int>(i)};
    }
  }

  Status walk(const ir::Graph& g) {
    for (const auto& node : g.nodes()) KILN_RETURN_IF_ERROR(visit(*node));
    return Status::OK();
  }

  const InputSet& needed() const { return needed_; }

 private:
  const Tensor* value_of(const ir::Value* v) const {
    if (v->constant) return &*v->constant;
    auto it = out_->folded.find(v);
    return it == out_->folded.end() ? nullptr : &it->second;
  }
  InputSet taint_of(const ir::Value* v) const {
    auto it = v ? taint_.find(v) : taint_.end();
    return it == taint_.end() ? InputSet{} : it->second;
  }

  Status visit(const ir::Node& node);
  Status plan_if(const ir::Node& node);
  Status plan_if_on_host(const ir::Node& node);
  Status inline_branch(const ir::Node& node, const char* which);
  Status add_identity(const ir::Node& owner, const ir::Value* from, const ir::Value* to);
  void note_needed(const ops::OpSchema& schema, const ops::InferContext& ctx);
  bool fold(const ir::Node& node, const ops::InferContext& ctx, const InputSet& taint);

  ConcreteTypes* out_;
  bool track_;
  std::map<const ir::Value*, InputSet> taint_;
  InputSet needed_;
};

Status Planner::visit(const ir::Node& node) {
  if (is_control_flow(node)) {
    if (node.op_type == "If") return plan_if(node);
    return unsupported("{}: {} runs only on the CPU backend so far (the GPU executor plans If, not loops)",
                       node.describe(), node.op_type);
  }
  const ops::OpSchema* schema = ops::OpRegistry::instance().find(node.domain, node.op_type);
  if (!schema) return unsupported("{}: op is not supported", node.describe());
  ops::InferContext ctx{node, {}, {}, {}, {}};
  InputSet taint;
  for (const ir::Value* v : node.inputs) {
    if (!v) {
      ctx.input_types.push_back(nullptr);
      ctx.input_values.push_back(nullptr);
      continue;
    }
    if (v->constant) out_->types[v] = ir::TensorType::of(v->constant->dtype(), v->constant->shape());
    auto it = out_->types.find(v);
    KILN_ASSERT(it != out_->types.end(), "{}: input '{}' has no type yet", node.describe(), v->name);
    ctx.input_types.push_back(&it->second);
    ctx.input_values.push_back(value_of(v));
    const InputSet t = taint_of(v);
    taint.insert(t.begin(), t.end());
  }
  ctx.output_types.resize(node.outputs.size());
  ctx.output_values.resize(node.outputs.size());
  KILN_RETURN_IF_ERROR(schema->infer(ctx).with_context(node.describe()));
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    const ir::Value* o = node.outputs[i];
    if (!o) continue;
    const ir::TensorType& t = ctx.output_types[i];
    if (!t.is_concrete()) {
      return unsupported("{}: output '{}' has shape {}, which depends on tensor data; the GPU executor needs every "
                         "shape known when it plans (run this model with --backend cpu)",
                         node.describe(), o->name, t.to_string());
    }
    out_->types[o] = t;
  }
  if (!taint.empty()) note_needed(*schema, ctx);
  if (!fold(node, ctx, taint)) out_->nodes.push_back(&node);
  return Status::OK();
}

// Infers `ctx.node` again without the values that derive from graph inputs: when the output
// types change (or cannot be inferred), those inputs are shape tensors.
void Planner::note_needed(const ops::OpSchema& schema, const ops::InferContext& ctx) {
  ops::InferContext blind{ctx.node, ctx.input_types, ctx.input_values, {}, {}};
  InputSet hidden;
  for (size_t i = 0; i < blind.input_values.size(); ++i) {
    const InputSet t = taint_of(ctx.node.input(i));
    if (t.empty()) continue;
    blind.input_values[i] = nullptr;
    hidden.insert(t.begin(), t.end());
  }
  blind.output_types.resize(ctx.output_types.size());
  blind.output_values.resize(ctx.output_types.size());
  Status st;
  try {
    st = schema.infer(blind);
  } catch (const std::exception&) {
    st = Status(StatusCode::kInternal, "");
  }
  if (!st.ok() || !same_types(ctx.output_types, blind.output_types)) needed_.insert(hidden.begin(), hidden.end());
}

// Computes the node's outputs on the host when its inputs are all known and they are small
// (or when inference gave them, like Shape's); returns whether it did.
bool Planner::fold(const ir::Node& node, const ops::InferContext& ctx, const InputSet& taint) {
  bool all_given = true, small = true;
  const int64_t limit = taint.empty() ? kMaxFoldElements : kMaxTaintedElements;
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (!node.outputs[i]) continue;
    all_given = all_given && ctx.output_values[i].has_value();
    small = small && Tensor::numel_of(ctx.output_types[i].concrete()) <= limit;
  }
  // Nodes with a graph attribute (FusedElementwise) are left to the device, as before.
  bool all_known = !has_graph_attr(node);
  for (size_t i = 0; i < node.inputs.size(); ++i) all_known = all_known && (!node.inputs[i] || ctx.input_values[i]);
  std::vector<Tensor> outs;
  if (all_given) {
    for (const auto& v : ctx.output_values) outs.push_back(v ? *v : Tensor());
  } else if (all_known && small) {
    auto no_subgraphs = [](const ir::Graph&, std::vector<Tensor>*) { return Status(StatusCode::kUnsupported, ""); };
    Status st;
    try {
      st = eval_node(node, ctx.input_values, no_subgraphs, &outs);
    } catch (const std::exception&) {
      st = Status(StatusCode::kInternal, "");  // leave it to run on the device
    }
    if (!st.ok()) return false;
  } else {
    return false;
  }
  // Shape and Size read only the (concrete) shape, so their values carry no input's taint.
  const bool shape_only = node.domain.empty() && (node.op_type == "Shape" || node.op_type == "Size");
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (!node.outputs[i]) continue;
    out_->folded[node.outputs[i]] = std::move(outs[i]);
    if (!taint.empty() && !shape_only) taint_[node.outputs[i]] = taint;
  }
  return true;
}

// An If whose condition is known here runs its taken branch inline: Identity nodes bring the
// enclosing values the branch reads in, and its outputs out to the If's outputs.
Status Planner::plan_if(const ir::Node& node) {
  const ir::Value* c = node.input(0);
  const Tensor* cond = c ? value_of(c) : nullptr;
  if (!cond) return plan_if_on_host(node);
  if (cond->numel() != 1 || cond->dtype() != DType::kBool) {
    return invalid_argument("{}: If condition must be one bool, got {} {}", node.describe(), dtype_name(cond->dtype()),
                            shape_to_string(cond->shape()));
  }
  const InputSet t = taint_of(c);
  needed_.insert(t.begin(), t.end());
  return inline_branch(node, *cond->data_as<bool>() ? "then_branch" : "else_branch");
}

Status Planner::inline_branch(const ir::Node& node, const char* which) {
  const ir::Graph* branch = node.attr_g(which);
  if (!branch || branch->outputs.size() != node.outputs.size()) {
    return invalid_argument("{}: If {} missing or with {} outputs for {}", node.describe(), which,
                            branch ? branch->outputs.size() : 0, node.outputs.size());
  }
  for (const auto& v : branch->values()) {
    if (!v->outer) continue;
    bool used = !v->consumers.empty();
    for (const ir::Value* o : branch->outputs) used = used || o == v.get();
    if (used) KILN_RETURN_IF_ERROR(add_identity(node, v->outer, v.get()));
  }
  KILN_RETURN_IF_ERROR(walk(*branch));
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (node.outputs[i]) KILN_RETURN_IF_ERROR(add_identity(node, branch->outputs[i], node.outputs[i]));
  }
  return Status::OK();
}

// An If whose condition is known only at run time runs on the host (the GPU fallback layer)
// when both branches give the same concrete output types. The node is copied with the enclosing
// values its branches read as extra inputs, so the plan keeps them alive and hands them over.
Status Planner::plan_if_on_host(const ir::Node& node) {
  std::vector<ir::TensorType> types[2];
  const char* branches[2] = {"then_branch", "else_branch"};
  for (int b = 0; b < 2; ++b) {
    ConcreteTypes scratch;
    scratch.types = out_->types;
    scratch.folded = out_->folded;
    Planner sub(&scratch, /*track=*/false);
    const Status st = sub.inline_branch(node, branches[b]);
    if (!st.ok()) {
      return unsupported("{}: the If condition depends on tensor data, and planning its {} failed: {}",
                         node.describe(), branches[b], st.message());
    }
    for (const ir::Value* o : node.outputs) types[b].push_back(o ? scratch.types.at(o) : ir::TensorType{});
  }
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (node.outputs[i] && !same_types({types[0][i]}, {types[1][i]})) {
      return unsupported("{}: the If condition depends on tensor data and its branches give output {} as {} and {}; "
                         "the GPU executor needs one shape when it plans (run this model with --backend cpu)",
                         node.describe(), i, types[0][i].to_string(), types[1][i].to_string());
    }
    if (node.outputs[i]) out_->types[node.outputs[i]] = types[0][i];
  }
  auto copy = std::make_unique<ir::Node>(node);  // the attributes share the branch graphs
  copy->inputs.insert(copy->inputs.end(), node.implicit_inputs.begin(), node.implicit_inputs.end());
  copy->implicit_inputs.clear();
  for (const ir::Value* v : copy->inputs) {
    if (v && v->constant) out_->types[v] = ir::TensorType::of(v->constant->dtype(), v->constant->shape());
    KILN_ASSERT(!v || out_->types.count(v), "{}: input '{}' has no type yet", node.describe(), v->name);
  }
  out_->nodes.push_back(copy.get());
  out_->synthetic.push_back(std::move(copy));
  return Status::OK();
}

Status Planner::add_identity(const ir::Node& owner, const ir::Value* from, const ir::Value* to) {
  auto n = std::make_unique<ir::Node>();
  n->name = owner.name + "/" + to->name;
  n->op_type = "Identity";
  n->opset = owner.opset;
  // The planner never writes through these pointers; Node just has no const form.
  n->inputs = {const_cast<ir::Value*>(from)};
  n->outputs = {const_cast<ir::Value*>(to)};
  out_->synthetic.push_back(std::move(n));
  return visit(*out_->synthetic.back());
}

}  // namespace

bool is_shape_tensor_candidate(const ir::Value& in, DType t, int64_t numel) {
  if (numel > kMaxShapeTensorElements) return false;
  if (dtype_is_integer(t) || t == DType::kBool) return true;
  if (!dtype_is_float(t)) return false;
  for (const ir::Node* n : in.consumers) {
    if (is_float_shape_operand(*n, &in)) return true;
  }
  return false;
}

Status find_value_inputs(const ir::Graph& g, const std::vector<ir::TensorType>& input_types,
                         const std::vector<const Tensor*>& values, std::vector<bool>* needed) {
  ConcreteTypes scratch;
  Planner p(&scratch, /*track=*/true);
  p.seed(g, input_types, values);
  KILN_RETURN_IF_ERROR(p.walk(g));
  needed->assign(g.inputs.size(), false);
  for (int i : p.needed()) (*needed)[i] = true;
  return Status::OK();
}

Status infer_concrete_types(const ir::Graph& g, const std::vector<ir::TensorType>& input_types,
                            const std::vector<const Tensor*>& known_values, ConcreteTypes* out) {
  Planner p(out, /*track=*/false);
  p.seed(g, input_types, known_values);
  KILN_RETURN_IF_ERROR(p.walk(g));
  // A graph output can be an initializer (a Constant node the optimizer folded) that no node reads.
  for (const ir::Value* v : g.outputs) {
    if (v->constant) out->types[v] = ir::TensorType::of(v->constant->dtype(), v->constant->shape());
  }
  return Status::OK();
}

}  // namespace kiln::runtime
