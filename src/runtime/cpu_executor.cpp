#include "runtime/cpu_executor.h"

#include <map>

#include "core/error.h"
#include "runtime/node_eval.h"

namespace kiln::runtime {
namespace {

using Env = std::map<const ir::Value*, Tensor>;

const Tensor* lookup(const ir::Value* v, const Env& env) {
  if (v->constant) return &*v->constant;
  auto it = env.find(v);
  return it == env.end() ? nullptr : &it->second;
}

Status run_graph(const ir::Graph& g, Env& env, std::vector<Tensor>* outputs);

// Index of the last node that reads each value, so tensors are released as soon as possible.
std::map<const ir::Value*, size_t> last_uses(const ir::Graph& g) {
  std::map<const ir::Value*, size_t> last;
  const auto& nodes = g.nodes();
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const ir::Value* v : nodes[i]->inputs) {
      if (v) last[v] = i;
    }
    for (const ir::Value* v : nodes[i]->implicit_inputs) last[v] = i;
  }
  for (const ir::Value* v : g.outputs) last[v] = nodes.size();
  return last;
}

Status run_node(const ir::Node& node, Env& env) {
  std::vector<const Tensor*> ins;
  for (const ir::Value* v : node.inputs) {
    if (!v) {
      ins.push_back(nullptr);
      continue;
    }
    const Tensor* t = lookup(v, env);
    KILN_ASSERT(t != nullptr, "{}: input '{}' has no value at run time", node.describe(), v->name);
    ins.push_back(t);
  }
  // Subgraphs see this graph's values through their proxies (Value::outer).
  auto run_subgraph = [&env](const ir::Graph& sub, std::vector<Tensor>* outs) -> Status {
    return run_subgraph_on_cpu(sub, [&env](const ir::Value* v) { return lookup(v, env); }, outs);
  };
  std::vector<Tensor> outs;
  KILN_RETURN_IF_ERROR(eval_node(node, ins, run_subgraph, &outs));
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (node.outputs[i]) env[node.outputs[i]] = std::move(outs[i]);
  }
  return Status::OK();
}

Status run_graph(const ir::Graph& g, Env& env, std::vector<Tensor>* outputs) {
  const auto last = last_uses(g);
  const auto& nodes = g.nodes();
  for (size_t i = 0; i < nodes.size(); ++i) {
    const ir::Node& node = *nodes[i];
    try {
      KILN_RETURN_IF_ERROR(run_node(node, env).with_context(node.describe()));
    } catch (const std::exception& e) {
      return Status(StatusCode::kInternal, node.describe() + ": " + e.what());
    }
    for (const ir::Value* v : node.inputs) {
      if (!v) continue;
      auto it = last.find(v);
      if (it != last.end() && it->second == i) env.erase(v);
    }
  }
  outputs->clear();
  for (const ir::Value* v : g.outputs) {
    const Tensor* t = lookup(v, env);
    if (!t) return Status(StatusCode::kInternal, "graph output '" + v->name + "' was not computed");
    outputs->push_back(*t);
  }
  return Status::OK();
}

}  // namespace

Status run_subgraph_on_cpu(const ir::Graph& sub, const std::function<const Tensor*(const ir::Value*)>& outer,
                           std::vector<Tensor>* outputs) {
  Env sub_env;
  for (const auto& v : sub.values()) {
    if (!v->outer) continue;
    const Tensor* t = outer(v->outer);
    KILN_ASSERT(t != nullptr, "subgraph reads '{}' which has no value", v->name);
    sub_env[v.get()] = *t;
  }
  return run_graph(sub, sub_env, outputs);
}

Status check_input(const ir::Value& declared, const Tensor& t) {
  const ir::TensorType& want = declared.type;
  if (t.dtype() != want.dtype) {
    return invalid_argument("input '{}' has dtype {} but the model expects {}", declared.name, dtype_name(t.dtype()),
                            dtype_name(want.dtype));
  }
  if (!want.shape) return Status::OK();
  if (static_cast<int>(want.shape->size()) != t.rank()) {
    return invalid_argument("input '{}' has shape {} (rank {}) but the model expects {}", declared.name,
                            shape_to_string(t.shape()), t.rank(), want.to_string());
  }
  for (int i = 0; i < t.rank(); ++i) {
    const ir::Dim& d = (*want.shape)[i];
    if (d.known() && d.value != t.shape()[i]) {
      return invalid_argument("input '{}' has shape {} but the model expects {} (dimension {})", declared.name,
                              shape_to_string(t.shape()), want.to_string(), i);
    }
  }
  return Status::OK();
}

Status CpuExecutor::run(const std::map<std::string, Tensor>& inputs, std::vector<Tensor>* outputs) const {
  Env env;
  for (const ir::Value* in : graph_.inputs) {
    auto it = inputs.find(in->name);
    if (it == inputs.end()) return invalid_argument("input '{}' is missing", in->name);
    KILN_RETURN_IF_ERROR(check_input(*in, it->second));
    env[in] = it->second;
  }
  for (const auto& [name, t] : inputs) {
    bool found = false;
    for (const ir::Value* in : graph_.inputs) found = found || in->name == name;
    if (!found) return invalid_argument("the model has no input named '{}'", name);
  }
  return run_graph(graph_, env, outputs);
}

}  // namespace kiln::runtime
