#include "passes/matcher.h"

#include <algorithm>
#include <set>

#include "core/error.h"

namespace kiln::passes {

Pattern Pattern::op(std::string op_type, std::vector<Pattern> inputs) {
  return any_of({std::move(op_type)}, std::move(inputs));
}

Pattern Pattern::any_of(std::vector<std::string> op_types, std::vector<Pattern> inputs) {
  Pattern p;
  p.kind = Kind::kOp;
  p.op_types = std::move(op_types);
  p.inputs = std::move(inputs);
  return p;
}

Pattern Pattern::any() { return Pattern{}; }

Pattern Pattern::constant() {
  Pattern p;
  p.kind = Kind::kConstant;
  return p;
}

Pattern& Pattern::bind(std::string n) {
  name = std::move(n);
  return *this;
}
Pattern& Pattern::in_domain(std::string d) {
  domain = std::move(d);
  return *this;
}
Pattern& Pattern::where(std::function<bool(const ir::Node&)> pred) {
  node_pred = std::move(pred);
  return *this;
}
Pattern& Pattern::where_value(std::function<bool(const ir::Value&)> pred) {
  value_pred = std::move(pred);
  return *this;
}
Pattern& Pattern::allow_shared() {
  shared = true;
  return *this;
}
Pattern& Pattern::commutative() {
  is_commutative = true;
  return *this;
}

ir::Node* Match::node(const std::string& name) const {
  auto it = nodes.find(name);
  KILN_ASSERT(it != nodes.end(), "pattern bound no node named '{}'", name);
  return it->second;
}

ir::Value* Match::value(const std::string& name) const {
  auto it = values.find(name);
  KILN_ASSERT(it != values.end(), "pattern bound no value named '{}'", name);
  return it->second;
}

bool is_graph_output(const ir::Value& v, const ir::Graph& g) {
  return std::find(g.outputs.begin(), g.outputs.end(), &v) != g.outputs.end();
}

namespace {

// Values read by subgraphs of nodes count as used even though they have no consumer slot.
std::set<const ir::Value*> implicitly_read(const ir::Graph& g) {
  std::set<const ir::Value*> read;
  for (const auto& n : g.nodes()) read.insert(n->implicit_inputs.begin(), n->implicit_inputs.end());
  return read;
}

// What one match attempt needs besides the pattern: the graph and its subgraph-read values.
struct Scope {
  const ir::Graph& g;
  const std::set<const ir::Value*>& implicit;
};

bool match_node(const Pattern& p, ir::Node* n, const Scope& s, Match* m);

// Matches `p` against value `v` read by the pattern's parent node. `inner` marks a value that
// the parent reads (so an op pattern here swallows its producer).
bool match_value(const Pattern& p, ir::Value* v, const Scope& s, Match* m) {
  const ir::Graph& g = s.g;
  if (!v) return false;
  if (p.value_pred && !p.value_pred(*v)) return false;
  switch (p.kind) {
    case Pattern::Kind::kAny:
      break;
    case Pattern::Kind::kConstant:
      if (!v->is_constant()) return false;
      break;
    case Pattern::Kind::kOp: {
      ir::Node* producer = v->producer;
      if (!producer) return false;
      if (!p.shared && (!has_single_use(*v, g) || s.implicit.count(v))) return false;
      // Every output of a swallowed node other than `v` must be unused.
      if (!p.shared) {
        for (const ir::Value* o : producer->outputs) {
          if (o && o != v && (!o->consumers.empty() || is_graph_output(*o, g))) return false;
        }
      }
      if (!match_node(p, producer, s, m)) return false;
      break;
    }
  }
  if (!p.name.empty()) {
    auto [it, inserted] = m->values.emplace(p.name, v);
    if (!inserted && it->second != v) return false;  // a name bound twice must be the same value
  }
  return true;
}

bool match_inputs_in_order(const Pattern& p, ir::Node* n, const Scope& s, Match* m,
                           const std::vector<size_t>& order) {
  for (size_t i = 0; i < p.inputs.size(); ++i) {
    if (!match_value(p.inputs[i], n->input(order[i]), s, m)) return false;
  }
  return true;
}

bool match_node(const Pattern& p, ir::Node* n, const Scope& s, Match* m) {
  if (p.kind != Pattern::Kind::kOp) return false;
  if (n->domain != p.domain) return false;
  if (std::find(p.op_types.begin(), p.op_types.end(), n->op_type) == p.op_types.end()) return false;
  if (p.node_pred && !p.node_pred(*n)) return false;
  if (std::find(m->matched_nodes.begin(), m->matched_nodes.end(), n) != m->matched_nodes.end()) return false;
  std::vector<size_t> order(p.inputs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  const Match saved = *m;
  m->matched_nodes.push_back(n);
  bool ok = match_inputs_in_order(p, n, s, m, order);
  if (!ok && p.is_commutative && p.inputs.size() == 2) {
    *m = saved;
    m->matched_nodes.push_back(n);
    ok = match_inputs_in_order(p, n, s, m, {1, 0});
  }
  if (!ok) {
    *m = saved;
    return false;
  }
  if (!p.name.empty()) {
    auto [it, inserted] = m->nodes.emplace(p.name, n);
    if (!inserted && it->second != n) {
      *m = saved;
      return false;
    }
  }
  return true;
}

bool match_in_scope(const Pattern& pattern, ir::Node* root, const Scope& s, Match* match) {
  *match = Match{};
  match->root = root;
  if (!match_node(pattern, root, s, match)) return false;
  if (!pattern.name.empty() && root->output(0)) match->values.emplace(pattern.name, root->output(0));
  return true;
}

}  // namespace

void replace_value(ir::Graph& g, ir::Value* from, ir::Value* to) {
  if (from == to) return;
  if (!is_graph_output(*from, g)) {
    g.replace_all_uses(from, to);
    return;
  }
  const bool is_input = std::find(g.inputs.begin(), g.inputs.end(), to) != g.inputs.end();
  if (to->producer && !is_input && !is_graph_output(*to, g)) {
    g.replace_all_uses(from, to);
    g.swap_names(from, to);
    return;
  }
  // `to` cannot carry the name: keep `from` as the output of an Identity reading `to`.
  std::vector<ir::Node*> readers = from->consumers;
  ir::Node* old_producer = from->producer;
  if (old_producer) {
    // The old producer (about to be removed as dead) writes a placeholder instead.
    ir::Value* placeholder = g.add_value(from->name + "_replaced", from->type);
    for (ir::Value*& o : old_producer->outputs) {
      if (o == from) o = placeholder;
    }
    placeholder->producer = old_producer;
    from->producer = nullptr;
  }
  for (ir::Node* r : readers) {
    for (ir::Value*& in : r->inputs) {
      if (in == from) in = to;
    }
    to->consumers.push_back(r);
  }
  from->consumers.clear();
  g.add_node("Identity", {to}, {from}, from->name + "/keep_name");
}

bool has_single_use(const ir::Value& v, const ir::Graph& g) {
  return v.consumers.size() == 1 && !is_graph_output(v, g);
}

bool match_at(const Pattern& pattern, ir::Node* root, const ir::Graph& g, Match* match) {
  const std::set<const ir::Value*> implicit = implicitly_read(g);
  return match_in_scope(pattern, root, Scope{g, implicit}, match);
}

int remove_dead_nodes(ir::Graph& g) {
  int removed = 0;
  for (bool again = true; again;) {
    again = false;
    const std::set<const ir::Value*> implicit = implicitly_read(g);
    // Walk backwards so a chain of dead nodes goes in one sweep.
    std::vector<ir::Node*> order;
    for (const auto& n : g.nodes()) order.push_back(n.get());
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      ir::Node* n = *it;
      bool used = false;
      for (const ir::Value* o : n->outputs) {
        used = used || (o && (!o->consumers.empty() || is_graph_output(*o, g) || implicit.count(o)));
      }
      if (!used) {
        g.remove_node(n);
        ++removed;
        again = true;
      }
    }
  }
  return removed;
}

bool apply_rules(ir::Graph& g, const std::vector<RewriteRule>& rules) {
  bool changed = false;
  // Each rewrite removes or replaces at least one matched node, so the walk ends; the bound is
  // a guard against a rule that keeps rewriting its own output.
  const size_t max_rewrites = 16 * g.nodes().size() + 64;
  size_t rewrites = 0;
  for (bool again = true; again;) {
    again = false;
    std::vector<ir::Node*> order;
    for (const auto& n : g.nodes()) order.push_back(n.get());
    const std::set<const ir::Value*> implicit = implicitly_read(g);
    const Scope scope{g, implicit};
    for (ir::Node* n : order) {
      for (const RewriteRule& rule : rules) {
        Match m;
        if (!match_in_scope(rule.pattern, n, scope, &m)) continue;
        if (!rule.rewrite(g, m)) continue;
        KILN_ASSERT(++rewrites <= max_rewrites, "rewrite rule '{}' does not converge", rule.name);
        changed = again = true;
        // Remove matched nodes that lost all readers (root first, then its swallowed inputs).
        const std::set<const ir::Value*> now_implicit = implicitly_read(g);
        for (ir::Node* dead : m.matched_nodes) {
          bool used = false;
          for (const ir::Value* o : dead->outputs) {
            used = used || (o && (!o->consumers.empty() || is_graph_output(*o, g) || now_implicit.count(o)));
          }
          if (!used) g.remove_node(dead);
        }
        KILN_ASSERT(g.topological_sort(), "rewrite rule '{}' created a cycle", rule.name);
        break;
      }
      if (again) break;
    }
  }
  if (changed) g.remove_unused_values();
  return changed;
}

}  // namespace kiln::passes
