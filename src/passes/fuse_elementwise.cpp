// fuse_elementwise: connected regions of elementwise ops with one output become one
// kiln.FusedElementwise node (form documented in ops/fused_elementwise.h).
//
// Regions grow upward from a sink: walking nodes last to first, an unassigned fusable node
// starts a region, which then takes in the producer of any of its inputs whose every reader
// is already in the region (so interior values have no readers outside, and the region has
// one output: the sink's). Such a region cannot close a cycle: every path out of it leaves
// through the sink, which depends on all of it.
//
// A node is fusable when ops::is_fusable_elementwise says so and its output shape equals the
// broadcast of its inputs other than one-element constants (which stay inside the body).
// Elementwise ops always produce that broadcast, so only a scalar constant of higher rank
// can break it ([4] + [1,1,1] is [1,1,4]); checked node by node, it makes every interior
// value the broadcast of the region inputs it depends on, as the fused form requires.
#include <algorithm>
#include <map>
#include <memory>
#include <set>

#include "core/error.h"
#include "ops/fused_elementwise.h"
#include "ops/shape_util.h"
#include "passes/matcher.h"
#include "passes/passes.h"

namespace kiln::passes {
namespace {

// Stays inside the body as a constant rather than becoming a node input.
bool inlined_constant(const ir::Value* v) {
  return v && v->constant && v->constant->numel() == 1 && ops::fusable_dtype(v->constant->dtype());
}

// The output shape is the broadcast of the inputs the fused node will read (see above).
bool keeps_broadcast_shape(const ir::Node& n) {
  const ir::TensorType& out = n.output(0)->type;
  if (!out.has_rank()) return false;
  std::vector<const ir::TensorType*> ins;
  for (const ir::Value* v : n.inputs) {
    if (!v || inlined_constant(v)) continue;
    if (!v->type.has_rank()) return false;
    ins.push_back(&v->type);
  }
  if (ins.empty()) return false;  // all-constant: constant folding's work, not ours
  std::vector<ir::Dim> shape;
  return ops::broadcast_types(ins, &shape).ok() && shape == *out.shape;
}

struct Region {
  std::vector<ir::Node*> nodes;  // topological order; the sink is last
};

class RegionFinder {
 public:
  explicit RegionFinder(const ir::Graph& g) : g_(g) {
    for (const auto& n : g.nodes()) {
      index_[n.get()] = static_cast<int>(index_.size());
      implicit_.insert(n->implicit_inputs.begin(), n->implicit_inputs.end());
    }
  }

  // Disjoint regions of at least two nodes, sinks last to first.
  std::vector<Region> find() {
    std::vector<Region> regions;
    const auto& nodes = g_.nodes();
    for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
      ir::Node* sink = it->get();
      if (assigned_.count(sink) || !fusable(sink)) continue;
      Region r = grow(sink);
      if (r.nodes.size() < 2) continue;
      assigned_.insert(r.nodes.begin(), r.nodes.end());
      regions.push_back(std::move(r));
    }
    return regions;
  }

 private:
  bool fusable(ir::Node* n) {
    auto [it, inserted] = fusable_.emplace(n, false);
    if (inserted) it->second = ops::is_fusable_elementwise(*n) && keeps_broadcast_shape(*n);
    return it->second;
  }

  // Whether the producer of `v` may join `members`: fusable, free, and `v` read only by them.
  bool absorbable(const ir::Value* v, const std::set<ir::Node*>& members) {
    ir::Node* p = v->producer;
    if (!p || members.count(p) || assigned_.count(p) || !fusable(p)) return false;
    if (is_graph_output(*v, g_) || implicit_.count(v)) return false;
    return std::all_of(v->consumers.begin(), v->consumers.end(), [&](ir::Node* c) { return members.count(c) != 0; });
  }

  Region grow(ir::Node* sink) {
    std::set<ir::Node*> members = {sink};
    for (bool again = true; again;) {
      again = false;
      std::vector<ir::Node*> ordered(members.begin(), members.end());
      sort_topologically(&ordered);
      for (ir::Node* n : ordered) {
        for (const ir::Value* v : n->inputs) {
          if (v && absorbable(v, members)) {
            members.insert(v->producer);
            again = true;
          }
        }
      }
    }
    Region r{{members.begin(), members.end()}};
    sort_topologically(&r.nodes);
    return r;
  }

  void sort_topologically(std::vector<ir::Node*>* nodes) const {
    std::sort(nodes->begin(), nodes->end(), [&](ir::Node* a, ir::Node* b) { return index_.at(a) < index_.at(b); });
  }

  const ir::Graph& g_;
  std::map<const ir::Node*, int> index_;
  std::set<const ir::Value*> implicit_;
  std::set<const ir::Node*> assigned_;
  std::map<const ir::Node*, bool> fusable_;
};

// Copies the region into a body graph and replaces it with one kiln.FusedElementwise node.
void fuse(ir::Graph& g, const Region& r) {
  const std::set<const ir::Node*> members(r.nodes.begin(), r.nodes.end());
  auto body = std::make_shared<ir::Graph>();
  body->parent = &g;
  body->opsets = g.opsets;
  std::map<const ir::Value*, ir::Value*> in_body;  // outer value -> body value
  std::vector<ir::Value*> node_inputs;
  auto body_value = [&](ir::Value* v) -> ir::Value* {
    if (!v) return nullptr;
    if (auto it = in_body.find(v); it != in_body.end()) return it->second;
    ir::Value* b = nullptr;
    if (inlined_constant(v)) {
      b = body->add_constant(v->name, *v->constant);
    } else {
      KILN_ASSERT(!v->producer || !members.count(v->producer), "region value '{}' read before it is made", v->name);
      b = body->add_value(v->name, v->type);
      body->inputs.push_back(b);
      node_inputs.push_back(v);
    }
    return in_body[v] = b;
  };
  for (ir::Node* n : r.nodes) {
    std::vector<ir::Value*> ins;
    for (ir::Value* v : n->inputs) ins.push_back(body_value(v));
    ir::Value* out = body->add_value(n->output(0)->name, n->output(0)->type);
    in_body[n->output(0)] = out;
    ir::Node* copy = body->add_node(n->op_type, std::move(ins), {out}, n->name);
    copy->opset = n->opset;
    copy->attrs = n->attrs;
  }
  ir::Value* sink_out = r.nodes.back()->output(0);
  body->outputs = {in_body.at(sink_out)};

  ir::Value* out = g.add_value(sink_out->name + "_fused", sink_out->type);
  ir::Node* fused = g.add_node(ops::kFusedElementwiseOp, node_inputs, {out}, r.nodes.back()->name + "/fused");
  fused->domain = ops::kFusedDomain;
  fused->opset = 1;
  ir::Attribute attr;
  attr.kind = ir::Attribute::Kind::kGraph;
  attr.g = std::move(body);
  fused->attrs["body"] = std::move(attr);
  replace_value(g, sink_out, out);
  for (auto it = r.nodes.rbegin(); it != r.nodes.rend(); ++it) g.remove_node(*it);
}

class FuseElementwise final : public Pass {
 public:
  std::string name() const override { return "fuse_elementwise"; }
  bool apply(ir::Graph& g, const PassContext&) override {
    const std::vector<Region> regions = RegionFinder(g).find();
    for (const Region& r : regions) fuse(g, r);
    if (regions.empty()) return false;
    KILN_ASSERT(g.topological_sort(), "fuse_elementwise created a cycle");
    g.remove_unused_values();
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> make_fuse_elementwise() { return std::make_unique<FuseElementwise>(); }

}  // namespace kiln::passes
