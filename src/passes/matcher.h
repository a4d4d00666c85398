// A small pattern matcher for local rewrites. A pattern describes a tree of nodes that ends at
// a root node; a rule pairs a pattern with a rewrite. Passes list rules instead of walking
// nodes by hand:
//
//   auto conv = Pattern::op("Conv").bind("conv");
//   RewriteRule rule{"conv_relu", Pattern::op("Relu", {conv}),
//                    [](ir::Graph& g, const Match& m) { ...; return true; }};
//   bool changed = apply_rules(g, {rule});
//
// Matching follows inputs upward from the root: an op pattern in input slot i matches when
// that input value is produced by a node of that op type. Inner op patterns by default also
// require that the value they produce is read by exactly one node and is not a graph output,
// because a fusion that swallows it would otherwise have to keep it alive anyway.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace kiln::passes {

class Pattern {
 public:
  // A node of `op_type` (default ONNX domain unless .in_domain()) whose first inputs match
  // `inputs` in order; inputs beyond the list are unconstrained.
  static Pattern op(std::string op_type, std::vector<Pattern> inputs = {});
  // A node whose op type is any of `op_types`.
  static Pattern any_of(std::vector<std::string> op_types, std::vector<Pattern> inputs = {});
  // Any present value (graph input, constant, or any node's output).
  static Pattern any();
  // A value with a known constant (initializer or folded).
  static Pattern constant();

  // Names the matched node (op patterns) and the matched value (every pattern) in the Match.
  Pattern& bind(std::string name);
  Pattern& in_domain(std::string domain);
  // An extra condition on the matched node (op patterns) or value (any/constant).
  Pattern& where(std::function<bool(const ir::Node&)> pred);
  Pattern& where_value(std::function<bool(const ir::Value&)> pred);
  // Lets an inner op pattern match a node whose output has other readers too.
  Pattern& allow_shared();
  // For a node with two inputs: also try the inputs in swapped order (Add, Mul, ...).
  Pattern& commutative();

  // Implementation details, public so the matcher can read them.
  enum class Kind { kOp, kAny, kConstant };
  Kind kind = Kind::kAny;
  std::vector<std::string> op_types;
  std::string domain;
  std::vector<Pattern> inputs;
  std::string name;
  std::function<bool(const ir::Node&)> node_pred;
  std::function<bool(const ir::Value&)> value_pred;
  bool shared = false;
  bool is_commutative = false;
};

struct Match {
  ir::Node* root = nullptr;
  std::map<std::string, ir::Node*> nodes;    // bound op patterns
  std::map<std::string, ir::Value*> values;  // bound patterns' values (for op patterns: the output read)
  std::vector<ir::Node*> matched_nodes;      // every node the pattern covered, root first

  // The bound node / value; throws (an internal error) when the name was not bound.
  ir::Node* node(const std::string& name) const;
  ir::Value* value(const std::string& name) const;
  bool has(const std::string& name) const { return values.count(name) != 0; }
};

// Tries to match `pattern` with `root` as the pattern's root node.
bool match_at(const Pattern& pattern, ir::Node* root, const ir::Graph& g, Match* match);

struct RewriteRule {
  std::string name;
  Pattern pattern;
  // Rewrites the matched nodes; returns false to decline (the graph must then be unchanged).
  // A rewrite typically adds a node (Graph::add_node), points the users of the old root's
  // output at the new one (replace_value below) and leaves the old nodes: apply_rules
  // removes matched nodes left without readers and restores topological order.
  std::function<bool(ir::Graph&, const Match&)> rewrite;
};

// Applies `rules` over the graph (not into subgraphs) until none fires: each node in order is
// tried against each rule in order; after a successful rewrite, dead matched nodes are removed,
// the graph is re-sorted and the walk restarts. Returns true if any rule fired.
bool apply_rules(ir::Graph& g, const std::vector<RewriteRule>& rules);

// Removes nodes none of whose outputs is read or exported, repeatedly; returns the count.
int remove_dead_nodes(ir::Graph& g);

// Points every reader of `from` at `to`. Graph outputs keep their names (users address outputs
// by name): when `from` is a graph output, `to` takes over its name if `to` is a node output
// that is neither a graph input nor another graph output; otherwise an Identity keeps the
// name (eliminate_noops leaves such an Identity alone).
void replace_value(ir::Graph& g, ir::Value* from, ir::Value* to);

// True when `v` is read by exactly one node slot and is not a graph output.
bool has_single_use(const ir::Value& v, const ir::Graph& g);
bool is_graph_output(const ir::Value& v, const ir::Graph& g);

}  // namespace kiln::passes
