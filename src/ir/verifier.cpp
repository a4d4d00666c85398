#include "ir/verifier.h"

#include <algorithm>
#include <set>

#include "core/error.h"

namespace kiln::ir {

Status verify_graph(const Graph& g) {
  std::set<const Value*> owned;
  for (const auto& v : g.values()) owned.insert(v.get());
  std::set<const Value*> available;
  for (const auto& v : g.values()) {
    if (!v->producer) {
      const bool is_input = std::find(g.inputs.begin(), g.inputs.end(), v.get()) != g.inputs.end();
      if (!is_input && !v->constant && !v->outer && !v->consumers.empty()) {
        return invalid_model("value '{}' is read but nothing produces it", v->name);
      }
      available.insert(v.get());
    }
  }
  for (const Value* v : g.inputs) {
    if (!owned.count(v)) return invalid_model("graph input '{}' does not belong to the graph", v->name);
  }
  for (const auto& n : g.nodes()) {
    for (const Value* v : n->inputs) {
      if (!v) continue;
      if (!owned.count(v)) return invalid_model("{} reads '{}' from another graph", n->describe(), v->name);
      if (!available.count(v)) {
        return invalid_model("{} reads '{}' before it is produced (not in topological order)",
                             n->describe(), v->name);
      }
      if (std::find(v->consumers.begin(), v->consumers.end(), n.get()) == v->consumers.end()) {
        return invalid_model("{} reads '{}' but is not among its consumers", n->describe(), v->name);
      }
    }
    for (const Value* v : n->implicit_inputs) {
      if (!available.count(v)) return invalid_model("{} captures '{}' before it exists", n->describe(), v->name);
    }
    for (const Value* v : n->outputs) {
      if (!v) continue;
      if (v->producer != n.get()) {
        return invalid_model("{} writes '{}' but is not its producer", n->describe(), v->name);
      }
      if (v->type.dtype == DType::kUndefined) {
        return invalid_model("{} output '{}' has no element type", n->describe(), v->name);
      }
      available.insert(v);
    }
    for (const auto& [k, a] : n->attrs) {
      if (a.g) KILN_RETURN_IF_ERROR(verify_graph(*a.g).with_context(n->describe() + " attribute " + k));
    }
  }
  for (const Value* v : g.outputs) {
    if (!v || !available.count(v)) {
      return invalid_model("graph output '{}' is never produced", v ? v->name : "?");
    }
  }
  return Status::OK();
}

}  // namespace kiln::ir
