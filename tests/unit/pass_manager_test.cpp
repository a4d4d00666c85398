// The matcher, the pass manager and the pipeline plumbing, with small passes defined here.
#include <gtest/gtest.h>

#include <sstream>

#include "builder/optimize.h"
#include "passes/matcher.h"
#include "passes/pass_manager.h"
#include "passes/pipeline.h"
#include "pass_test_util.h"

namespace kiln::passes {
namespace {

using testing::canonical;
using testing::graph_from_text;

// Relu(Relu(x)) -> Relu(x): the inner Relu is kept, the outer one's readers read it.
class CollapseReluPairs final : public Pass {
 public:
  std::string name() const override { return "collapse_relu_pairs"; }
  bool apply(ir::Graph& g, const PassContext&) override {
    RewriteRule rule{"relu_relu", Pattern::op("Relu", {Pattern::op("Relu").allow_shared().bind("inner")}),
                     [](ir::Graph& graph, const Match& m) {
                       graph.replace_all_uses(m.root->output(0), m.value("inner"));
                       return true;
                     }};
    return apply_rules(g, {rule});
  }
};

constexpr const char* kReluChain = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2,3] x) => (float[2,3] y) {
  a = Relu(x)
  b = Relu(a)
  y = Relu(b)
})";

TEST(Matcher, RewritesToFixedPoint) {
  auto g = graph_from_text(kReluChain);
  CollapseReluPairs pass;
  EXPECT_TRUE(testing::run_pass(pass, *g));
  EXPECT_EQ(canonical(*g), "n0 = Relu(%x)\nreturn n0\n");
  EXPECT_FALSE(testing::run_pass(pass, *g)) << "a second run must change nothing";
}

TEST(Matcher, InnerPatternNeedsSingleUseUnlessShared) {
  auto g = graph_from_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y, float[2] z) {
  a = Relu(x)
  y = Sigmoid(a)
  z = Tanh(a)
})");
  Match m;
  ir::Node* sigmoid = g->nodes()[1].get();
  EXPECT_FALSE(match_at(Pattern::op("Sigmoid", {Pattern::op("Relu")}), sigmoid, *g, &m));
  EXPECT_TRUE(match_at(Pattern::op("Sigmoid", {Pattern::op("Relu").allow_shared().bind("r")}), sigmoid, *g, &m));
  EXPECT_EQ(m.node("r")->op_type, "Relu");
  EXPECT_EQ(m.matched_nodes.size(), 2u);
}

TEST(Matcher, CommutativeTriesBothOrders) {
  auto g = graph_from_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x, float[2] w) => (float[2] y) {
  a = Relu(x)
  y = Add(w, a)
})");
  ir::Node* add = g->nodes()[1].get();
  Match m;
  const Pattern plain = Pattern::op("Add", {Pattern::op("Relu").bind("r"), Pattern::any().bind("other")});
  EXPECT_FALSE(match_at(plain, add, *g, &m));
  Pattern swapped = plain;
  swapped.commutative();
  ASSERT_TRUE(match_at(swapped, add, *g, &m));
  EXPECT_EQ(m.value("other")->name, "w");
}

TEST(Matcher, ConstantAndPredicates) {
  auto g = graph_from_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y) <float[1] c = {2.0}> {
  y = Mul(x, c)
})");
  ir::Node* mul = g->nodes()[0].get();
  Match m;
  EXPECT_TRUE(match_at(Pattern::op("Mul", {Pattern::any(), Pattern::constant().bind("c")}), mul, *g, &m));
  EXPECT_FALSE(match_at(Pattern::op("Mul", {Pattern::constant()}), mul, *g, &m));
  EXPECT_FALSE(match_at(Pattern::op("Mul").where([](const ir::Node& n) { return n.inputs.size() == 3; }), mul, *g, &m));
}

TEST(PassManager, DumpsSkipsAndCounts) {
  auto g = graph_from_text(kReluChain);
  PassManager pm;
  pm.add(std::make_unique<CollapseReluPairs>());
  pm.add(std::make_unique<CollapseReluPairs>(), [](const PassContext& ctx) { return ctx.backend == "cuda"; });
  std::ostringstream dump;
  PassManagerOptions options;
  options.dump = &dump;
  options.verify_each = true;
  std::vector<PassStats> stats;
  ASSERT_TRUE(pm.run(*g, testing::cpu_pass_context(), options, &stats).ok());
  ASSERT_EQ(stats.size(), 2u);
  EXPECT_TRUE(stats[0].changed);
  EXPECT_EQ(stats[0].nodes_before, 3);
  EXPECT_EQ(stats[0].nodes_after, 1);
  EXPECT_TRUE(stats[1].skipped);
  EXPECT_NE(dump.str().find("collapse_relu_pairs"), std::string::npos);
  EXPECT_NE(dump.str().find("3 -> 1"), std::string::npos);

  auto g2 = graph_from_text(kReluChain);
  options.disabled = {"collapse_relu_pairs"};
  ASSERT_TRUE(pm.run(*g2, testing::cpu_pass_context(), options).ok());
  EXPECT_EQ(g2->nodes().size(), 3u);
}

// A pass that breaks the graph is reported with its name, not a crash.
class BreakingPass final : public Pass {
 public:
  std::string name() const override { return "breaking_pass"; }
  bool apply(ir::Graph& g, const PassContext&) override {
    g.remove_node(g.nodes()[0].get());  // leaves its readers dangling
    return true;
  }
};

TEST(PassManager, BrokenGraphNamesThePass) {
  auto g = graph_from_text(kReluChain);
  PassManager pm;
  pm.add(std::make_unique<BreakingPass>());
  PassManagerOptions options;
  options.verify_each = true;
  PassContext ctx;  // no type inference: verification must catch it
  Status st = pm.run(*g, ctx, options);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("breaking_pass"), std::string::npos) << st.message();
}

TEST(Optimize, RejectsUnknownPassAndLevel) {
  builder::OptimizeOptions o;
  o.disabled_passes = {"no_such_pass"};
  EXPECT_EQ(builder::validate(o).code(), StatusCode::kInvalidArgument);
  o.disabled_passes.clear();
  o.level = 7;
  EXPECT_EQ(builder::validate(o).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace kiln::passes

namespace kiln::passes {
namespace {

TEST(ReplaceValue, GraphOutputsKeepTheirNames) {
  auto g = testing::graph_from_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y) {
  a = Relu(x)
  y = Sigmoid(a)
})");
  ir::Value* y = g->find_value("y");
  ir::Value* a = g->find_value("a");
  replace_value(*g, y, a);  // a node output takes the name over
  remove_dead_nodes(*g);
  g->remove_unused_values();
  ASSERT_TRUE(ir::verify_graph(*g).ok());
  EXPECT_EQ(g->outputs[0]->name, "y");
  EXPECT_EQ(g->outputs[0]->producer->op_type, "Relu");

  auto g2 = testing::graph_from_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y) {
  y = Relu(x)
})");
  replace_value(*g2, g2->find_value("y"), g2->find_value("x"));  // a graph input cannot: Identity
  remove_dead_nodes(*g2);
  ASSERT_TRUE(ir::verify_graph(*g2).ok()) << ir::verify_graph(*g2).to_string();
  EXPECT_EQ(g2->outputs[0]->name, "y");
  EXPECT_EQ(g2->outputs[0]->producer->op_type, "Identity");
  EXPECT_EQ(g2->nodes().size(), 1u);
}

}  // namespace
}  // namespace kiln::passes
