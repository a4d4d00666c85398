// kiln.FusedElementwise: schema (see fused_elementwise.h for the body form).
#include "ops/fused_elementwise.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <set>

#include "core/error.h"
#include "ops/op_schema.h"
#include "ops/shape_util.h"

namespace kiln::ops {
namespace {

template <size_t N>
bool listed(const char* const (&list)[N], const std::string& op) {
  return std::any_of(std::begin(list), std::end(list), [&](const char* o) { return op == o; });
}

bool is_float(DType t) {
  return t == DType::kFloat16 || t == DType::kBFloat16 || t == DType::kFloat32 || t == DType::kFloat64;
}

bool is_scalar_constant(const ir::Value* v) { return v && v->constant && v->constant->numel() == 1; }

// The number of inputs `op` takes in a body, and whether trailing ones may be absent.
bool input_count_ok(const ir::Node& n) {
  const size_t count = n.inputs.size();
  if (n.op_type == "Where") return count == 3;
  if (n.op_type == "Clip") return count >= 1 && count <= 3;
  if (listed(kFusedBinaryOps, n.op_type)) return count == 2;
  return count == 1;
}

Status infer_fused_elementwise(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(validate_fused_elementwise(ctx.node));
  const ir::Graph& body = *ctx.node.attr_g("body");
  std::vector<const ir::TensorType*> ins;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    KILN_ENSURE(ctx.has_input(i), "input {} is absent; every input of a fused node is required", i);
    ins.push_back(ctx.input_types[i]);
  }
  const DType dtype = body.outputs[0]->type.dtype;
  KILN_ENSURE(dtype != DType::kUndefined, "the body output has no element type");
  const bool ranked = std::all_of(ins.begin(), ins.end(), [](const ir::TensorType* t) { return t->has_rank(); });
  if (!ranked) {
    set_output(ctx, 0, dtype, std::nullopt);
    return Status::OK();
  }
  std::vector<ir::Dim> shape;
  KILN_RETURN_IF_ERROR(broadcast_types(ins, &shape));
  set_output(ctx, 0, dtype, std::move(shape));
  return Status::OK();
}

// One flop per body op and output element; every input read once, the output written once.
Cost fused_elementwise_cost(const CostContext& c) {
  Cost cost;
  const ir::Graph* body = c.node.attr_g("body");
  const auto& y = *c.output_types[0];
  const double n = static_cast<double>(Tensor::numel_of(y.concrete()));
  cost.flops = n * static_cast<double>(body ? body->nodes().size() : 1);
  cost.bytes = n * static_cast<double>(dtype_size(y.dtype));
  for (const auto* t : c.input_types) {
    if (t) cost.bytes += static_cast<double>(Tensor::numel_of(t->concrete()) * dtype_size(t->dtype));
  }
  return cost;
}

}  // namespace

bool fusable_dtype(DType t) { return is_float(t) || t == DType::kBool; }

bool is_fusable_elementwise(const ir::Node& n) {
  if (!n.domain.empty() || n.outputs.size() != 1 || !n.output(0)) return false;
  if (!listed(kFusedUnaryOps, n.op_type) && !listed(kFusedBinaryOps, n.op_type) && n.op_type != "Where") return false;
  if (!input_count_ok(n) || !n.input(0)) return false;
  for (const ir::Value* v : n.inputs) {
    if (v && !fusable_dtype(v->type.dtype)) return false;
  }
  if (!fusable_dtype(n.output(0)->type.dtype)) return false;
  if (n.op_type == "Clip") {
    for (size_t i = 1; i < n.inputs.size(); ++i) {
      if (n.inputs[i] && !is_scalar_constant(n.inputs[i])) return false;
    }
  } else if (n.op_type != "Where") {
    for (const ir::Value* v : n.inputs) {
      if (!v) return false;
    }
  }
  if (n.op_type == "Where" && (!n.input(1) || !n.input(2))) return false;
  if (n.op_type == "Cast") return is_float(n.input(0)->type.dtype) && is_float(n.output(0)->type.dtype);
  return true;
}

Status validate_fused_elementwise(const ir::Node& node) {
  const ir::Graph* body = node.attr_g("body");
  KILN_ENSURE(body != nullptr, "{}: attribute 'body' (a graph) is missing", node.describe());
  KILN_ENSURE(body->inputs.size() == node.inputs.size(), "{}: the body has {} inputs but the node has {}",
              node.describe(), body->inputs.size(), node.inputs.size());
  KILN_ENSURE(body->outputs.size() == 1 && node.outputs.size() == 1, "{}: the body and the node need exactly one output",
              node.describe());
  KILN_ENSURE(!body->nodes().empty() && body->outputs[0]->producer == body->nodes().back().get(),
              "{}: the body output must be its last node's output", node.describe());
  std::set<const ir::Value*> available(body->inputs.begin(), body->inputs.end());
  for (const auto& n : body->nodes()) {
    KILN_ENSURE(is_fusable_elementwise(*n), "{}: body {} is not an elementwise op a fused body may hold",
                node.describe(), n->describe());
    KILN_ENSURE(n->implicit_inputs.empty(), "{}: body {} reads enclosing values", node.describe(), n->describe());
    for (const ir::Value* v : n->inputs) {
      KILN_ENSURE(!v || available.count(v) || is_scalar_constant(v),
                  "{}: body {} reads '{}', which is neither a body input, an earlier output nor a scalar constant",
                  node.describe(), n->describe(), v ? v->name : "");
    }
    available.insert(n->output(0));
  }
  return Status::OK();
}

void register_fused_elementwise_ops(OpRegistry& r) {
  r.add({.op_type = kFusedElementwiseOp,
         .domain = kFusedDomain,
         .attributes = {"body"},
         .infer = infer_fused_elementwise,
         .cost = fused_elementwise_cost});
}

}  // namespace kiln::ops
