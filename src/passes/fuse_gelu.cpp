// fuse_gelu: GELU written out with Erf or with the tanh approximation becomes one Gelu node
// (opset 20 semantics; approximate="tanh" for the latter):
//   0.5 * x * (1 + Erf(x / sqrt(2)))                                  (or x * 0.70710678)
//   0.5 * x * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))            (x^3 as Pow(x, 3) or x*x*x)
// The product of the three factors x, 0.5 and (1 + ...) is matched in each association
// exporters produce; every Mul and Add is commutative. Constants are compared with
// pattern::kConstantRelTol.
#include <cmath>
#include <numbers>

#include "passes/matcher.h"
#include "passes/passes.h"
#include "passes/pattern_util.h"

namespace kiln::passes {
namespace {

using pattern::scalar_near;

Pattern x() { return Pattern::any().bind("x"); }
Pattern mul(Pattern a, Pattern b) { return std::move(Pattern::op("Mul", {std::move(a), std::move(b)}).commutative()); }
Pattern add(Pattern a, Pattern b) { return std::move(Pattern::op("Add", {std::move(a), std::move(b)}).commutative()); }

// The arguments of Erf: x / sqrt(2) and x * (1 / sqrt(2)).
std::vector<Pattern> erf_arguments() {
  return {Pattern::op("Div", {x(), scalar_near(std::sqrt(2.0))}), mul(x(), scalar_near(std::sqrt(0.5)))};
}

// The arguments of Tanh: sqrt(2/pi) * (x + 0.044715 * x^3), with x^3 as Pow(x, 3) or x*(x*x).
std::vector<Pattern> tanh_arguments() {
  const double sqrt_2_over_pi = std::sqrt(2.0 / std::numbers::pi);
  std::vector<Pattern> out;
  for (Pattern cube : {Pattern::op("Pow", {x(), scalar_near(3.0)}), mul(x(), mul(x(), x()))}) {
    out.push_back(mul(scalar_near(sqrt_2_over_pi), add(x(), mul(scalar_near(0.044715), cube))));
  }
  return out;
}

// x * 0.5 * one_plus in the three associations exporters write.
std::vector<Pattern> products(const Pattern& one_plus) {
  const Pattern half = scalar_near(0.5);
  return {mul(mul(x(), one_plus), half), mul(mul(x(), half), one_plus), mul(x(), mul(one_plus, half))};
}

void add_rules(std::vector<RewriteRule>* rules, const std::string& func, const std::vector<Pattern>& args,
               bool approximate_tanh) {
  for (const Pattern& arg : args) {
    for (Pattern& p : products(add(Pattern::op(func, {arg}), scalar_near(1.0)))) {
      rules->push_back({"gelu_" + func, std::move(p), [approximate_tanh](ir::Graph& g, const Match& m) {
                          ir::Node* gelu = pattern::replace_with_node(g, m.root->output(0), "Gelu", {m.value("x")}, 20);
                          if (approximate_tanh) gelu->attrs["approximate"] = pattern::string_attr("tanh");
                          return true;
                        }});
    }
  }
}

class FuseGelu final : public Pass {
 public:
  FuseGelu() {
    add_rules(&rules_, "Erf", erf_arguments(), false);
    add_rules(&rules_, "Tanh", tanh_arguments(), true);
  }
  std::string name() const override { return "fuse_gelu"; }
  bool apply(ir::Graph& g, const PassContext&) override { return apply_rules(g, rules_); }

 private:
  std::vector<RewriteRule> rules_;
};

}  // namespace

std::unique_ptr<Pass> make_fuse_gelu() { return std::make_unique<FuseGelu>(); }

}  // namespace kiln::passes
