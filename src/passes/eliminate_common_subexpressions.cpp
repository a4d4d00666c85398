// eliminate_common_subexpressions: identical small constants are merged first, then nodes that
// compute the same thing (same op, opset, inputs and attributes) are merged into the first in
// topological order, so whole repeated chains collapse in one sweep.
#include <cstdint>
#include <cstring>
#include <map>

#include "passes/cleanup_util.h"
#include "passes/matcher.h"
#include "passes/passes.h"

namespace kiln::passes {
namespace {

// Larger constants are weights: equal copies are rare and comparing them costs.
constexpr size_t kMaxMergedConstantBytes = 64 * 1024;

bool same_tensor(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
}

// The key constants are grouped by: dtype, shape and raw bytes.
std::string constant_key(const Tensor& t) {
  std::string key = std::to_string(static_cast<int>(t.dtype())) + shape_to_string(t.shape());
  key.append(static_cast<const char*>(t.data()), t.nbytes());
  return key;
}

bool merge_constants(ir::Graph& g) {
  std::vector<ir::Value*> constants;
  for (const auto& v : g.values()) {
    if (v->constant && v->constant->nbytes() <= kMaxMergedConstantBytes && !is_graph_output(*v, g) &&
        is_used(*v, g)) {
      constants.push_back(v.get());
    }
  }
  std::map<std::string, ir::Value*> first;
  bool changed = false;
  for (ir::Value* v : constants) {
    auto [it, inserted] = first.emplace(constant_key(*v->constant), v);
    if (inserted) continue;
    replace_everywhere(g, v, it->second);
    changed = true;
  }
  return changed;
}

bool same_attr(const ir::Attribute& a, const ir::Attribute& b) {
  using Kind = ir::Attribute::Kind;
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case Kind::kInt: return a.i == b.i;
    case Kind::kFloat: return a.f == b.f;
    case Kind::kString: return a.s == b.s;
    case Kind::kTensor: return same_tensor(a.t, b.t);
    case Kind::kGraph: return false;  // nodes with subgraphs are never merged
    case Kind::kInts: return a.ints == b.ints;
    case Kind::kFloats: return a.floats == b.floats;
    case Kind::kStrings: return a.strings == b.strings;
  }
  return false;
}

bool same_computation(const ir::Node& a, const ir::Node& b) {
  if (a.domain != b.domain || a.op_type != b.op_type || a.opset != b.opset || a.inputs != b.inputs ||
      a.outputs.size() != b.outputs.size() || a.attrs.size() != b.attrs.size()) {
    return false;
  }
  for (size_t i = 0; i < a.outputs.size(); ++i) {
    if ((a.outputs[i] == nullptr) != (b.outputs[i] == nullptr)) return false;
  }
  for (auto ia = a.attrs.begin(), ib = b.attrs.begin(); ia != a.attrs.end(); ++ia, ++ib) {
    if (ia->first != ib->first || !same_attr(ia->second, ib->second)) return false;
  }
  return true;
}

// Groups candidate nodes cheaply; same_computation decides. Value addresses only select a
// bucket, so the result does not depend on them.
std::string node_key(const ir::Node& n) {
  std::string key = n.domain + "." + n.op_type + "/" + std::to_string(n.opset);
  for (const ir::Value* in : n.inputs) key += "," + std::to_string(reinterpret_cast<uintptr_t>(in));
  return key;
}

// `dup`'s outputs can be replaced by `keep`'s unless both are graph outputs (a graph output
// cannot take another's name).
bool can_merge(const ir::Node& dup, const ir::Node& keep, const ir::Graph& g) {
  for (size_t i = 0; i < dup.outputs.size(); ++i) {
    if (dup.outputs[i] && is_graph_output(*dup.outputs[i], g) && is_graph_output(*keep.outputs[i], g)) return false;
  }
  return true;
}

bool merge_nodes(ir::Graph& g) {
  std::vector<ir::Node*> order;
  for (const auto& n : g.nodes()) order.push_back(n.get());
  std::map<std::string, std::vector<ir::Node*>> buckets;
  bool changed = false;
  for (ir::Node* n : order) {
    if (is_random_op(*n) || has_subgraph(*n)) continue;
    std::vector<ir::Node*>& bucket = buckets[node_key(*n)];
    ir::Node* keep = nullptr;
    for (ir::Node* c : bucket) {
      if (same_computation(*n, *c) && can_merge(*n, *c, g)) {
        keep = c;
        break;
      }
    }
    if (!keep) {
      bucket.push_back(n);
      continue;
    }
    for (size_t i = 0; i < n->outputs.size(); ++i) {
      if (n->outputs[i]) replace_everywhere(g, n->outputs[i], keep->outputs[i]);
    }
    g.remove_node(n);
    changed = true;
  }
  return changed;
}

class EliminateCommonSubexpressions final : public Pass {
 public:
  std::string name() const override { return "eliminate_common_subexpressions"; }
  bool apply(ir::Graph& g, const PassContext&) override {
    return for_each_graph(g, [](ir::Graph& graph) {
      const bool constants = merge_constants(graph);
      const bool nodes = merge_nodes(graph);
      if (constants || nodes) graph.remove_unused_values();
      return constants || nodes;
    });
  }
};

}  // namespace

std::unique_ptr<Pass> make_eliminate_common_subexpressions() {
  return std::make_unique<EliminateCommonSubexpressions>();
}

}  // namespace kiln::passes
