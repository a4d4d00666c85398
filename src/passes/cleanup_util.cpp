#include "passes/cleanup_util.h"

#include <algorithm>
#include <set>
#include <string>

#include "ops/shape_util.h"
#include "passes/matcher.h"

namespace kiln::passes {

bool is_random_op(const ir::Node& n) {
  static const std::set<std::string> kRandom = {"RandomNormal", "RandomUniform", "RandomNormalLike",
                                                "RandomUniformLike", "Multinomial", "Bernoulli"};
  return n.domain.empty() && kRandom.count(n.op_type) != 0;
}

bool has_subgraph(const ir::Node& n) {
  return std::any_of(n.attrs.begin(), n.attrs.end(), [](const auto& kv) { return kv.second.g != nullptr; });
}

void replace_everywhere(ir::Graph& g, ir::Value* from, ir::Value* to) {
  if (from == to) return;
  // Subgraph captures first: replace_value may leave `from` produced by an Identity, but the
  // subgraphs can read `to` directly either way.
  for (const auto& n : g.nodes()) {
    auto& captured = n->implicit_inputs;
    if (std::find(captured.begin(), captured.end(), from) == captured.end()) continue;
    captured.erase(std::remove(captured.begin(), captured.end(), from), captured.end());
    if (std::find(captured.begin(), captured.end(), to) == captured.end()) captured.push_back(to);
    for (auto& [name, a] : n->attrs) {
      if (!a.g) continue;
      for (const auto& v : a.g->values()) {
        if (v->outer == from) v->outer = to;
      }
    }
  }
  replace_value(g, from, to);
}

ir::Value* replace_with_constant(ir::Graph& g, ir::Value* v, Tensor t) {
  ir::Value* c = g.add_constant(v->name, std::move(t));
  const bool output = is_graph_output(*v, g);
  replace_everywhere(g, v, c);
  if (!output) g.swap_names(v, c);  // `v` is now unread and about to go
  return c;
}

bool is_used(const ir::Value& v, const ir::Graph& g) {
  if (!v.consumers.empty() || is_graph_output(v, g)) return true;
  for (const auto& n : g.nodes()) {
    const auto& captured = n->implicit_inputs;
    if (std::find(captured.begin(), captured.end(), &v) != captured.end()) return true;
  }
  return false;
}

bool for_each_graph(ir::Graph& g, const std::function<bool(ir::Graph&)>& fn) {
  bool changed = false;
  for (const auto& n : g.nodes()) {
    for (auto& [name, a] : n->attrs) {
      if (a.g) changed = for_each_graph(*a.g, fn) || changed;
    }
  }
  return fn(g) || changed;
}

bool same_static_type(const ir::TensorType& a, const ir::TensorType& b) {
  if (a.dtype != b.dtype || !a.has_rank() || !b.has_rank() || a.rank() != b.rank()) return false;
  for (int i = 0; i < a.rank(); ++i) {
    const ir::Dim& x = (*a.shape)[i];
    const ir::Dim& y = (*b.shape)[i];
    if (x.known() != y.known()) return false;
    if (x.known() ? x.value != y.value : (x.symbol.empty() || x.symbol != y.symbol)) return false;
  }
  return true;
}

bool constant_ints(const ir::Value* v, std::vector<int64_t>* out) {
  if (!v || !v->constant) return false;
  const DType t = v->constant->dtype();
  if (t != DType::kInt64 && t != DType::kInt32) return false;
  return ops::tensor_to_ints(*v->constant, out).ok();
}

}  // namespace kiln::passes
