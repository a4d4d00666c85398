#include "builder/cpu_plan_part.h"

#include <map>

#include "runtime/memory_plan.h"
#include "runtime/shape_inference.h"

namespace kiln::builder {
namespace {

using json = nlohmann::json;

json layer_table(const ir::Graph& g) {
  json layers = json::array();
  for (const auto& n : g.nodes()) {
    layers.push_back({{"name", n->name}, {"op", n->domain.empty() ? n->op_type : n->domain + "." + n->op_type},
                      {"tactic", "cpu"}});
  }
  return layers;
}

// Activations of the top-level graph with their lifetimes in node steps (inputs are written
// at step 0, outputs read after the last node). Values of unknown size count as empty.
std::vector<runtime::PlanTensor> activations(const ir::Graph& g) {
  std::map<const ir::Value*, int> index;
  std::vector<runtime::PlanTensor> tensors;
  auto add = [&](const ir::Value* v, int step) {
    if (!v || v->constant || index.count(v)) return;
    index[v] = static_cast<int>(tensors.size());
    runtime::PlanTensor t;
    t.name = v->name;
    if (v->type.is_concrete()) {
      t.bytes = static_cast<size_t>(Tensor::numel_of(v->type.concrete())) * dtype_size(v->type.dtype);
    }
    t.first = t.last = step;
    tensors.push_back(t);
  };
  for (const ir::Value* v : g.inputs) add(v, 0);
  const int steps = static_cast<int>(g.nodes().size());
  for (int i = 0; i < steps; ++i) {
    const ir::Node& n = *g.nodes()[i];
    for (const ir::Value* v : n.outputs) add(v, i + 1);
    auto reads = n.inputs;
    reads.insert(reads.end(), n.implicit_inputs.begin(), n.implicit_inputs.end());
    for (const ir::Value* v : reads) {
      if (index.count(v)) tensors[index[v]].last = std::max(tensors[index[v]].last, i + 1);
    }
  }
  for (const ir::Value* v : g.outputs) {
    if (index.count(v)) tensors[index[v]].last = steps + 1;
  }
  return tensors;
}

void set_input_shapes(ir::Graph& g, const std::vector<ir::TensorType>& types) {
  for (size_t i = 0; i < g.inputs.size(); ++i) g.inputs[i]->type = types[i];
}

}  // namespace

Status cpu_shape_sets(ir::Graph& g, const std::vector<ShapeSet>& sets, json* out) {
  size_t weights = 0;
  for (const auto& v : g.values()) {
    if (v->constant && !v->outer) weights += v->constant->nbytes();
  }
  const json layers = layer_table(g);
  std::vector<ir::TensorType> declared;
  for (const ir::Value* v : g.inputs) declared.push_back(v->type);
  *out = json::array();
  for (const ShapeSet& set : sets) {
    std::vector<ir::TensorType> concrete;
    for (size_t i = 0; i < g.inputs.size(); ++i) concrete.push_back(ir::TensorType::of(declared[i].dtype, set[i]));
    set_input_shapes(g, concrete);
    Status st = runtime::infer_graph_types(g);
    const size_t arena = st.ok() ? runtime::plan_memory(activations(g)).arena_bytes : 0;
    set_input_shapes(g, declared);
    KILN_RETURN_IF_ERROR(runtime::infer_graph_types(g));
    KILN_RETURN_IF_ERROR(st.with_context("input shapes of a profile"));
    out->push_back({{"inputs", set},
                    {"layers", layers},
                    {"memory", {{"weights", weights}, {"arena", arena}, {"workspace", 0}, {"peak", weights + arena}}}});
  }
  return Status::OK();
}

}  // namespace kiln::builder
