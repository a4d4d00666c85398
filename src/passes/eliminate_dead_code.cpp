// eliminate_dead_code: removes nodes whose outputs nobody reads, then values and initializers
// nothing uses, in subgraphs (If branches) too. A subgraph that stops reading an enclosing
// value stops capturing it, so that value can go as well.
#include <algorithm>
#include <set>

#include "passes/cleanup_util.h"
#include "passes/matcher.h"
#include "passes/passes.h"

namespace kiln::passes {
namespace {

// Drops the captures of `n` that none of its subgraphs refers to any more.
bool prune_captures(ir::Node& n) {
  std::set<const ir::Value*> referenced;
  for (const auto& [name, a] : n.attrs) {
    if (!a.g) continue;
    for (const auto& v : a.g->values()) {
      if (v->outer) referenced.insert(v->outer);
    }
  }
  auto& captured = n.implicit_inputs;
  const size_t before = captured.size();
  captured.erase(std::remove_if(captured.begin(), captured.end(), [&](ir::Value* v) { return !referenced.count(v); }),
                 captured.end());
  return captured.size() != before;
}

bool eliminate_in(ir::Graph& g) {
  // Subgraphs are already clean (for_each_graph goes innermost first): update what they capture.
  bool changed = false;
  for (const auto& n : g.nodes()) {
    if (has_subgraph(*n)) changed = prune_captures(*n) || changed;
  }
  changed = remove_dead_nodes(g) > 0 || changed;
  const size_t values_before = g.values().size();
  g.remove_unused_values();
  return changed || g.values().size() != values_before;
}

class EliminateDeadCode final : public Pass {
 public:
  std::string name() const override { return "eliminate_dead_code"; }
  bool apply(ir::Graph& g, const PassContext&) override { return for_each_graph(g, eliminate_in); }
};

}  // namespace

std::unique_ptr<Pass> make_eliminate_dead_code() { return std::make_unique<EliminateDeadCode>(); }

}  // namespace kiln::passes
