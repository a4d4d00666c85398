// The graph IR: Values (tensors) connected by Nodes (ops). Graph owns both; nodes are kept
// in topological order. Subgraphs (If branches) are Graphs owned by a node attribute, and
// may read values of the enclosing graph through `Value::outer`.
#pragma once
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/attribute.h"
#include "ir/types.h"
#include "kiln/tensor.h"

namespace kiln::ir {

class Node;

struct Value {
  std::string name;
  TensorType type;
  Node* producer = nullptr;         // null for graph inputs, initializers and outer references
  std::vector<Node*> consumers;     // a node appears once per input slot that reads this value
  std::optional<Tensor> constant;   // initializer or folded constant
  Value* outer = nullptr;           // in a subgraph: the enclosing graph's value this one stands for

  bool is_constant() const { return constant.has_value(); }
};

class Node {
 public:
  std::string name;
  std::string op_type;
  std::string domain;  // "" for the default ONNX domain
  int opset = 0;       // opset version of `domain` the model declared
  std::vector<Value*> inputs;   // nullptr marks an omitted optional input
  std::vector<Value*> outputs;  // nullptr marks an omitted optional output
  std::map<std::string, Attribute> attrs;
  // Values of enclosing graphs that this node's subgraphs read (kept alive while it runs).
  std::vector<Value*> implicit_inputs;

  // Input i, or nullptr when absent (beyond the end or omitted).
  Value* input(size_t i) const { return i < inputs.size() ? inputs[i] : nullptr; }
  Value* output(size_t i) const { return i < outputs.size() ? outputs[i] : nullptr; }

  bool has_attr(const std::string& n) const { return attrs.count(n) != 0; }
  const Attribute* attr(const std::string& n) const;
  int64_t attr_i(const std::string& n, int64_t dflt) const;
  float attr_f(const std::string& n, float dflt) const;
  std::string attr_s(const std::string& n, const std::string& dflt) const;
  std::vector<int64_t> attr_ints(const std::string& n, std::vector<int64_t> dflt = {}) const;
  std::vector<float> attr_floats(const std::string& n, std::vector<float> dflt = {}) const;
  const Tensor* attr_t(const std::string& n) const;
  const Graph* attr_g(const std::string& n) const;

  // "node 'conv1' (Conv)": how errors name a node.
  std::string describe() const;
};

class Graph {
 public:
  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  std::string name;
  std::vector<Value*> inputs;   // graph inputs (not initializers)
  std::vector<Value*> outputs;
  Graph* parent = nullptr;      // enclosing graph for subgraphs
  std::map<std::string, int> opsets;  // domain -> version, as the model declared

  const std::vector<std::unique_ptr<Node>>& nodes() const { return nodes_; }
  const std::vector<std::unique_ptr<Value>>& values() const { return values_; }

  // Creates a value with a unique name (a suffix is added when `name` is taken).
  Value* add_value(const std::string& name, TensorType type = {});
  Value* add_constant(const std::string& name, Tensor t);
  Value* find_value(const std::string& name) const;
  // Appends a node and wires producer/consumer links. Keep topological order when adding.
  Node* add_node(std::string op_type, std::vector<Value*> inputs, std::vector<Value*> outputs,
                 std::string name = "");
  // Removes a node and unlinks it from its values (values stay; dead-code removal drops them).
  void remove_node(Node* n);
  // Rewires every consumer of `from` (and graph outputs) to read `to` instead.
  void replace_all_uses(Value* from, Value* to);
  // Swaps the names of two values of this graph (a rewrite uses it so that the value it
  // creates keeps the name of the graph output it replaces).
  void swap_names(Value* a, Value* b);
  // Drops values nothing produces, consumes or exports (other than graph inputs).
  void remove_unused_values();
  // Re-sorts nodes topologically; returns false if there is a cycle.
  bool topological_sort();

 private:
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<std::unique_ptr<Value>> values_;
  std::map<std::string, Value*> by_name_;
};

// Human-readable listing of a graph (inputs, initializers in brief, one line per node).
std::string print_graph(const Graph& g);

}  // namespace kiln::ir
