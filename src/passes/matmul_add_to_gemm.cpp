// matmul_add_to_gemm: Add(MatMul(A, B), C) with A [M, K], B a constant [K, N] and C
// broadcasting to [M, N] without widening it becomes Gemm(A, B, C) (alpha = beta = 1), which
// a backend runs as one GEMM with the bias in its epilogue, and which fuse_gemm_activation
// can then extend with an activation.
//
// Only rank-2 A: Gemm is strictly 2-D, so a batched A [..., M, K] would need a Reshape to
// [prod(...) * M, K] before and back after, whose shapes are values to compute when the batch
// dims are dynamic. That is a rule for a later reshape-aware pass, not this one.
#include "passes/fusion_util.h"
#include "passes/passes.h"

namespace kiln::passes {
namespace {

bool is_rank2(const ir::Value& v) { return v.type.rank() == 2; }

// C is [], [N], [1], [M, N], [1, N], [M, 1] or [1, 1]: Gemm broadcasts it to [M, N].
bool broadcasts_to(const ir::TensorType& c, const ir::Dim& m, const ir::Dim& n) {
  if (!c.has_rank() || c.rank() > 2) return false;
  const std::vector<ir::Dim>& d = *c.shape;
  // Equal when both are the same number or the same named dim; unnamed unknown dims never are.
  auto fits = [](const ir::Dim& have, const ir::Dim& want) {
    return have.value == 1 || (have == want && (have.known() || !have.symbol.empty()));
  };
  if (c.rank() == 1) return fits(d[0], n);
  return c.rank() == 0 || (fits(d[0], m) && fits(d[1], n));
}

bool to_gemm(ir::Graph& g, const Match& m) {
  ir::Value* a = m.value("a");
  ir::Value* b = m.value("b");
  ir::Value* c = m.value("c");
  const ir::TensorType& y = m.node("matmul")->output(0)->type;
  if (!is_rank2(*a) || !is_rank2(*b) || y.rank() != 2 || c->type.dtype != y.dtype) return false;
  if (!broadcasts_to(c->type, (*y.shape)[0], (*y.shape)[1])) return false;
  add_replacement(g, *m.node("matmul"), "Gemm", "", {a, b, c}, m.root->output(0));
  return true;
}

class MatMulAddToGemm final : public Pass {
 public:
  std::string name() const override { return "matmul_add_to_gemm"; }
  bool apply(ir::Graph& g, const PassContext&) override {
    auto matmul = Pattern::op("MatMul", {Pattern::any().bind("a"), Pattern::constant().bind("b")}).bind("matmul");
    auto add = Pattern::op("Add", {matmul, Pattern::any().bind("c")}).commutative();
    return apply_rules(g, {{"matmul_add_to_gemm", add, to_gemm}});
  }
};

}  // namespace

std::unique_ptr<Pass> make_matmul_add_to_gemm() { return std::make_unique<MatMulAddToGemm>(); }

}  // namespace kiln::passes
