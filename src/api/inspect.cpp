#include "kiln/inspect.h"

#include <algorithm>

#include "api/inspect_optimize.h"
#include "api/plan_load.h"
#include "api/tensor_info.h"
#include "core/error.h"
#include "onnx/importer.h"
#include "ops/op_schema.h"
#include "runtime/shape_inference.h"

namespace kiln {
namespace {

// Gives graph input `v` the concrete shape the user asked for, or its declared shape with
// dynamic dims taken as 1. An input of unknown rank keeps its type (its consumers' cost
// then stays unknown).
Status concretize_input(ir::Value& v, const std::vector<int64_t>* given, std::vector<int64_t>* used) {
  used->clear();
  if (given) {
    for (int64_t d : *given) {
      KILN_ENSURE(d >= 0, "--shape for input '{}': dimension {} is negative", v.name, d);
    }
    if (v.type.shape) {
      const auto& declared = *v.type.shape;
      KILN_ENSURE(declared.size() == given->size(), "--shape for input '{}' has rank {}, but the model declares {}",
                  v.name, given->size(), v.type.to_string());
      for (size_t i = 0; i < declared.size(); ++i) {
        KILN_ENSURE(!declared[i].known() || declared[i].value == (*given)[i],
                    "--shape for input '{}' gives dimension {} as {}, but the model fixes it to {} ({})", v.name, i,
                    (*given)[i], declared[i].value, v.type.to_string());
      }
    }
    *used = *given;
  } else if (v.type.shape) {
    for (const ir::Dim& d : *v.type.shape) used->push_back(d.known() ? d.value : 1);
  } else {
    return Status::OK();
  }
  v.type = ir::TensorType::of(v.type.dtype, *used);
  return Status::OK();
}

int64_t type_bytes(const ir::TensorType& t) {
  return Tensor::numel_of(t.concrete()) * static_cast<int64_t>(dtype_size(t.dtype));
}

// Cost of one node with concrete types; false when some shape is not concrete.
bool node_cost(const ir::Node& node, const ops::OpSchema& schema, ops::Cost* cost) {
  ops::CostContext ctx{node, {}, {}};
  for (const ir::Value* v : node.inputs) {
    if (v && !v->type.is_concrete()) return false;
    ctx.input_types.push_back(v ? &v->type : nullptr);
  }
  for (const ir::Value* v : node.outputs) {
    if (v && !v->type.is_concrete()) return false;
    ctx.output_types.push_back(v ? &v->type : nullptr);
  }
  if (schema.cost) {
    *cost = schema.cost(ctx);
    return true;
  }
  // Default: one operation per output element, every operand read or written once.
  *cost = {};
  for (const ir::TensorType* t : ctx.output_types) {
    if (!t) continue;
    cost->flops += static_cast<double>(Tensor::numel_of(t->concrete()));
    cost->bytes += static_cast<double>(type_bytes(*t));
  }
  for (const ir::TensorType* t : ctx.input_types) {
    if (t) cost->bytes += static_cast<double>(type_bytes(*t));
  }
  return true;
}

void add_cost(OpCostSummary& s, const ops::Cost& c) {
  s.macs += c.macs;
  s.flops += c.flops;
  s.bytes += c.bytes;
}

// Accumulates parameters and per-op costs over `g` and its subgraphs. A subgraph (If branch,
// Loop body) is counted once, as if it ran once.
void summarize_graph(const ir::Graph& g, std::map<std::string, OpCostSummary>& by_op, ModelSummary* s) {
  for (const auto& v : g.values()) {
    if (!v->constant) continue;
    s->param_count += v->constant->numel();
    s->param_bytes += static_cast<int64_t>(v->constant->nbytes());
  }
  for (const auto& node : g.nodes()) {
    const std::string key = node->domain.empty() ? node->op_type : node->domain + "." + node->op_type;
    OpCostSummary& op = by_op[key];
    op.op_type = key;
    ++op.count;
    ++s->node_count;
    const ops::OpSchema* schema = ops::OpRegistry::instance().find(node->domain, node->op_type);
    ops::Cost cost;
    if (schema && node_cost(*node, *schema, &cost)) {
      add_cost(op, cost);
    } else {
      ++op.unknown_cost;
    }
    for (const auto& [name, attr] : node->attrs) {
      if (attr.g) summarize_graph(*attr.g, by_op, s);
    }
  }
}

Status inspect_impl(const std::string& path, const std::map<std::string, std::vector<int64_t>>& shapes,
                    ModelSummary* s) {
  std::unique_ptr<ir::Graph> g;
  KILN_RETURN_IF_ERROR(import_model_or_plan(path, &g));  // a plan: its optimized graph
  for (const auto& [name, dims] : shapes) {
    const bool known = std::any_of(g->inputs.begin(), g->inputs.end(), [&](const ir::Value* v) { return v->name == name; });
    if (!known) {
      std::string names;
      for (const ir::Value* v : g->inputs) names += (names.empty() ? "'" : ", '") + v->name + "'";
      return invalid_argument("--shape names '{}', but the model's inputs are {}", name, names);
    }
  }
  for (ir::Value* v : g->inputs) {
    s->inputs.push_back(tensor_info_of(*v));
    auto it = shapes.find(v->name);
    s->input_shapes.emplace_back();
    KILN_RETURN_IF_ERROR(concretize_input(*v, it == shapes.end() ? nullptr : &it->second, &s->input_shapes.back()));
  }
  // Declared output types, before inference replaces them.
  for (const ir::Value* v : g->outputs) s->outputs.push_back(tensor_info_of(*v));
  KILN_RETURN_IF_ERROR(runtime::infer_graph_types(*g));
  for (const ir::Value* v : g->outputs) s->inferred_outputs.push_back(tensor_info_of(*v));
  s->opsets = g->opsets;

  std::map<std::string, OpCostSummary> by_op;
  summarize_graph(*g, by_op, s);
  s->total.op_type = "total";
  for (auto& [key, op] : by_op) {
    s->total.count += op.count;
    s->total.macs += op.macs;
    s->total.flops += op.flops;
    s->total.bytes += op.bytes;
    s->total.unknown_cost += op.unknown_cost;
    s->ops.push_back(std::move(op));
  }
  std::stable_sort(s->ops.begin(), s->ops.end(), [](const OpCostSummary& a, const OpCostSummary& b) {
    return a.total_flops() > b.total_flops();
  });
  s->graph_text = ir::print_graph(*g);
  return Status::OK();
}

}  // namespace

Status inspect_model(const std::string& path, const std::map<std::string, std::vector<int64_t>>& shapes,
                     ModelSummary* summary) {
  return inspect_model(path, shapes, InspectOptions{}, summary);
}

Status inspect_model(const std::string& path, const std::map<std::string, std::vector<int64_t>>& shapes,
                     const InspectOptions& options, ModelSummary* summary) {
  *summary = ModelSummary{};
  try {
    KILN_RETURN_IF_ERROR(inspect_impl(path, shapes, summary));
    return options.optimize ? inspect_optimized(path, options, summary) : Status::OK();
  } catch (const std::exception& e) {
    return {StatusCode::kInternal, e.what()};
  }
}

std::vector<std::string> supported_op_types() {
  std::vector<std::string> ops = ops::OpRegistry::instance().op_types();
  ops.push_back("Constant");  // folded into a constant value by the importer
  std::sort(ops.begin(), ops.end());
  return ops;
}

}  // namespace kiln
