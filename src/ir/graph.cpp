#include "ir/graph.h"

#include <algorithm>
#include <set>

#include "core/error.h"

namespace kiln::ir {

const Attribute* Node::attr(const std::string& n) const {
  auto it = attrs.find(n);
  return it == attrs.end() ? nullptr : &it->second;
}

int64_t Node::attr_i(const std::string& n, int64_t dflt) const {
  const Attribute* a = attr(n);
  return a ? a->i : dflt;
}

float Node::attr_f(const std::string& n, float dflt) const {
  const Attribute* a = attr(n);
  return a ? a->f : dflt;
}

std::string Node::attr_s(const std::string& n, const std::string& dflt) const {
  const Attribute* a = attr(n);
  return a ? a->s : dflt;
}

std::vector<int64_t> Node::attr_ints(const std::string& n, std::vector<int64_t> dflt) const {
  const Attribute* a = attr(n);
  return a ? a->ints : dflt;
}

std::vector<float> Node::attr_floats(const std::string& n, std::vector<float> dflt) const {
  const Attribute* a = attr(n);
  return a ? a->floats : dflt;
}

const Tensor* Node::attr_t(const std::string& n) const {
  const Attribute* a = attr(n);
  return a && a->kind == Attribute::Kind::kTensor ? &a->t : nullptr;
}

const Graph* Node::attr_g(const std::string& n) const {
  const Attribute* a = attr(n);
  return a && a->kind == Attribute::Kind::kGraph ? a->g.get() : nullptr;
}

std::string Node::describe() const {
  std::string op = domain.empty() ? op_type : domain + "." + op_type;
  return "node '" + name + "' (" + op + ")";
}

Value* Graph::add_value(const std::string& name, TensorType type) {
  std::string unique = name;
  for (int k = 1; by_name_.count(unique); ++k) unique = name + "_" + std::to_string(k);
  auto v = std::make_unique<Value>();
  v->name = unique;
  v->type = std::move(type);
  Value* raw = v.get();
  values_.push_back(std::move(v));
  by_name_[unique] = raw;
  return raw;
}

Value* Graph::add_constant(const std::string& name, Tensor t) {
  Value* v = add_value(name, TensorType::of(t.dtype(), t.shape()));
  v->constant = std::move(t);
  return v;
}

void Graph::swap_names(Value* a, Value* b) {
  std::swap(a->name, b->name);
  by_name_[a->name] = a;
  by_name_[b->name] = b;
}

Value* Graph::find_value(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

Node* Graph::add_node(std::string op_type, std::vector<Value*> inputs, std::vector<Value*> outputs,
                      std::string name) {
  auto n = std::make_unique<Node>();
  n->op_type = std::move(op_type);
  n->name = name.empty() ? n->op_type + "_" + std::to_string(nodes_.size()) : std::move(name);
  n->inputs = std::move(inputs);
  n->outputs = std::move(outputs);
  if (auto it = opsets.find(""); it != opsets.end()) n->opset = it->second;
  Node* raw = n.get();
  for (Value* v : raw->inputs) {
    if (v) v->consumers.push_back(raw);
  }
  for (Value* v : raw->outputs) {
    if (v) {
      KILN_ASSERT(v->producer == nullptr, "value '{}' already has a producer", v->name);
      v->producer = raw;
    }
  }
  nodes_.push_back(std::move(n));
  return raw;
}

void Graph::remove_node(Node* n) {
  for (Value* v : n->inputs) {
    if (!v) continue;
    auto it = std::find(v->consumers.begin(), v->consumers.end(), n);
    if (it != v->consumers.end()) v->consumers.erase(it);
  }
  for (Value* v : n->outputs) {
    if (v && v->producer == n) v->producer = nullptr;
  }
  auto it = std::find_if(nodes_.begin(), nodes_.end(), [n](const auto& p) { return p.get() == n; });
  KILN_ASSERT(it != nodes_.end(), "node '{}' not in graph", n->name);
  nodes_.erase(it);
}

void Graph::replace_all_uses(Value* from, Value* to) {
  for (Node* c : from->consumers) {
    for (Value*& in : c->inputs) {
      if (in == from) in = to;
    }
    to->consumers.push_back(c);
  }
  // A node reading `from` twice appears twice in consumers and was rewired on the first visit;
  // the second visit pushed a duplicate that matches the second slot, which is what we want.
  from->consumers.clear();
  for (Value*& o : outputs) {
    if (o == from) o = to;
  }
}

void Graph::remove_unused_values() {
  std::set<const Value*> keep(inputs.begin(), inputs.end());
  keep.insert(outputs.begin(), outputs.end());
  for (const auto& n : nodes_) {
    keep.insert(n->inputs.begin(), n->inputs.end());
    keep.insert(n->outputs.begin(), n->outputs.end());
    keep.insert(n->implicit_inputs.begin(), n->implicit_inputs.end());
  }
  // Values referenced from subgraphs through `outer` must stay too.
  std::vector<const Graph*> stack;
  for (const auto& n : nodes_) {
    for (const auto& [k, a] : n->attrs) {
      if (a.g) stack.push_back(a.g.get());
    }
  }
  while (!stack.empty()) {
    const Graph* g = stack.back();
    stack.pop_back();
    for (const auto& v : g->values()) {
      if (v->outer) keep.insert(v->outer);
    }
    for (const auto& n : g->nodes()) {
      for (const auto& [k, a] : n->attrs) {
        if (a.g) stack.push_back(a.g.get());
      }
    }
  }
  std::vector<std::unique_ptr<Value>> kept;
  for (auto& v : values_) {
    if (keep.count(v.get())) {
      kept.push_back(std::move(v));
    } else {
      by_name_.erase(v->name);
    }
  }
  values_ = std::move(kept);
}

bool Graph::topological_sort() {
  std::set<const Value*> ready;
  for (const auto& v : values_) {
    if (!v->producer) ready.insert(v.get());
  }
  std::vector<std::unique_ptr<Node>> sorted;
  std::vector<std::unique_ptr<Node>> pending = std::move(nodes_);
  bool progress = true;
  while (!pending.empty() && progress) {
    progress = false;
    for (auto& n : pending) {
      if (!n) continue;
      bool ok = true;
      for (const Value* v : n->inputs) ok = ok && (!v || ready.count(v));
      for (const Value* v : n->implicit_inputs) ok = ok && ready.count(v);
      if (!ok) continue;
      for (const Value* v : n->outputs) {
        if (v) ready.insert(v);
      }
      sorted.push_back(std::move(n));
      progress = true;
    }
    pending.erase(std::remove(pending.begin(), pending.end(), nullptr), pending.end());
  }
  const bool acyclic = pending.empty();
  for (auto& n : pending) sorted.push_back(std::move(n));
  nodes_ = std::move(sorted);
  return acyclic;
}

}  // namespace kiln::ir
