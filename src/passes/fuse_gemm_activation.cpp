// fuse_gemm_activation: act(Gemm(A, B, C)) -> kiln.FusedGemm(A, B, C) with the activation in
// its epilogue (ops/fused_conv.cpp). A MatMul of two rank-2 operands is a Gemm without C
// (matmul_add_to_gemm has already turned MatMul + bias into Gemm), so act(MatMul) fuses too.
#include "passes/fusion_util.h"
#include "passes/passes.h"

namespace kiln::passes {
namespace {

bool is_fusable_product(const ir::Node& n) {
  const ir::Value* y = n.output(0);
  if (!y || !is_fusable_dtype(y->type.dtype)) return false;
  return n.op_type == "Gemm" || (n.input(0)->type.rank() == 2 && n.input(1)->type.rank() == 2);
}

bool fuse(ir::Graph& g, ir::Node& producer, const ops::Activation& act, ir::Value* out) {
  ir::Node* n = add_replacement(g, producer, "FusedGemm", "kiln", producer.inputs, out);
  ops::set_activation(*n, act);
  return true;
}

class FuseGemmActivation final : public Pass {
 public:
  std::string name() const override { return "fuse_gemm_activation"; }
  bool apply(ir::Graph& g, const PassContext&) override {
    auto product = Pattern::any_of({"Gemm", "MatMul"}).where(is_fusable_product);
    return apply_rules(g, activation_rules("gemm", product, fuse));
  }
};

}  // namespace

std::unique_ptr<Pass> make_fuse_gemm_activation() { return std::make_unique<FuseGemmActivation>(); }

}  // namespace kiln::passes
