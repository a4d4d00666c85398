#include <gtest/gtest.h>

#include "ir/graph.h"
#include "ir/verifier.h"

namespace kiln::ir {
namespace {

TEST(Graph, AddNodeWiresProducersAndConsumers) {
  Graph g;
  Value* x = g.add_value("x", TensorType(DType::kFloat32, {Dim::named("N"), 4}));
  g.inputs.push_back(x);
  Value* y = g.add_value("y", TensorType(DType::kFloat32, {Dim::named("N"), 4}));
  Node* n = g.add_node("Relu", {x}, {y}, "relu");
  g.outputs.push_back(y);
  EXPECT_EQ(y->producer, n);
  ASSERT_EQ(x->consumers.size(), 1u);
  EXPECT_EQ(x->consumers[0], n);
  EXPECT_TRUE(verify_graph(g).ok());
  EXPECT_NE(print_graph(g).find("%y = Relu(%x)"), std::string::npos) << print_graph(g);
}

TEST(Graph, UniqueValueNames) {
  Graph g;
  Value* a = g.add_value("t");
  Value* b = g.add_value("t");
  EXPECT_NE(a->name, b->name);
}

TEST(Verifier, CatchesDanglingValuesAndOrder) {
  Graph g;
  Value* x = g.add_value("x", TensorType(DType::kFloat32, {2}));
  g.inputs.push_back(x);
  Value* mid = g.add_value("mid", TensorType(DType::kFloat32, {2}));
  Value* y = g.add_value("y", TensorType(DType::kFloat32, {2}));
  g.add_node("Relu", {mid}, {y}, "second");
  g.add_node("Relu", {x}, {mid}, "first");
  g.outputs.push_back(y);
  Status s = verify_graph(g);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("topological"), std::string::npos) << s.message();
  ASSERT_TRUE(g.topological_sort());
  EXPECT_TRUE(verify_graph(g).ok());

  Value* orphan = g.add_value("orphan", TensorType(DType::kFloat32, {2}));
  Value* z = g.add_value("z", TensorType(DType::kFloat32, {2}));
  g.add_node("Relu", {orphan}, {z}, "reads_orphan");
  EXPECT_FALSE(verify_graph(g).ok());
}

TEST(Graph, ReplaceAllUsesAndRemoveNode) {
  Graph g;
  Value* x = g.add_value("x", TensorType(DType::kFloat32, {2}));
  g.inputs.push_back(x);
  Value* a = g.add_value("a", TensorType(DType::kFloat32, {2}));
  Value* b = g.add_value("b", TensorType(DType::kFloat32, {2}));
  Node* id = g.add_node("Identity", {x}, {a});
  g.add_node("Add", {a, a}, {b});
  g.outputs.push_back(b);
  g.replace_all_uses(a, x);
  g.remove_node(id);
  g.remove_unused_values();
  EXPECT_EQ(g.find_value("a"), nullptr);
  EXPECT_EQ(x->consumers.size(), 2u);
  EXPECT_TRUE(verify_graph(g).ok());
}

}  // namespace
}  // namespace kiln::ir
