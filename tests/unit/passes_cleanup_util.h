// Checks shared by the clean-up pass tests: a pass turns graph `before` into graph `after`
// (compared canonically), keeps the numbers, and changes nothing on a second run.
#pragma once
#include <string>

#include "pass_test_util.h"
#include "passes/passes.h"

// A one-graph model at opset 17: KILN_GRAPH("(float[2] x) => (float[2] y)", "y = Relu(x)").
#define KILN_GRAPH(sig, body) "<ir_version: 8, opset_import: [\"\" : 17]>\ng " sig " {\n" body "\n}"

namespace kiln::testing {

inline void expect_rewrite(passes::Pass& pass, const std::string& before, const std::string& after,
                           const passes::PassContext& ctx = cpu_pass_context()) {
  auto g = graph_from_text(before);
  auto reference = graph_from_text(before);
  EXPECT_TRUE(run_pass(pass, *g, ctx)) << pass.name() << " did not fire";
  EXPECT_EQ(canonical(*g), canonical(*graph_from_text(after)));
  expect_same_outputs(*reference, *g);
  EXPECT_FALSE(run_pass(pass, *g, ctx)) << pass.name() << ": a second run must change nothing";
}

inline void expect_unchanged(passes::Pass& pass, const std::string& text,
                             const passes::PassContext& ctx = cpu_pass_context()) {
  auto g = graph_from_text(text);
  const std::string before = canonical(*g);
  EXPECT_FALSE(run_pass(pass, *g, ctx)) << pass.name() << " must not fire";
  EXPECT_EQ(canonical(*g), before);
}

// Graph output names, in order (rewrites must keep them).
inline std::string output_names(const ir::Graph& g) {
  std::string names;
  for (const ir::Value* v : g.outputs) names += (names.empty() ? "" : ",") + v->name;
  return names;
}

}  // namespace kiln::testing
