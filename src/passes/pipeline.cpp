#include "passes/pipeline.h"

#include <algorithm>

#include "passes/passes.h"

namespace kiln::passes {
namespace {

bool wants_channels_last(const PassContext& ctx) { return ctx.prefer_channels_last; }
bool wants_16_bit(const PassContext& ctx) { return ctx.precision == "fp16" || ctx.precision == "bf16"; }
bool has_tensor_core_convs(const PassContext& ctx) { return ctx.backend == "cuda" && wants_16_bit(ctx); }

void add_cleanups(PassManager& pm) {
  pm.add(make_eliminate_noops());
  pm.add(make_fold_shape_computations());
  pm.add(make_constant_folding());
  pm.add(make_eliminate_common_subexpressions());
  pm.add(make_eliminate_dead_code());
}

void add_fusions(PassManager& pm) {
  // Pattern rewrites of whole subgraphs first, while the exporters' patterns are intact.
  pm.add(make_fuse_layernorm());
  pm.add(make_fuse_gelu());
  pm.add(make_fuse_softmax());
  // Algebra into convolution/GEMM weights, then epilogue fusion into them.
  pm.add(make_fold_batchnorm());
  pm.add(make_fold_channel_affine());
  pm.add(make_matmul_add_to_gemm());
  pm.add(make_fuse_conv_bias_activation());
  pm.add(make_fuse_gemm_activation());
  pm.add(make_assign_layout(), wants_channels_last);
  // 16-bit storage once the fused ops exist, so weights are converted after folding into them.
  pm.add(make_lower_precision(), wants_16_bit);
  pm.add(make_pad_conv_channels(), has_tensor_core_convs);
  // What is left of elementwise work becomes one fused node per chain (of 16-bit ops if lowered).
  pm.add(make_fuse_elementwise());
}

}  // namespace

PassManager build_pipeline(int level) {
  PassManager pm;
  if (level >= 1) add_cleanups(pm);
  if (level >= 2) {
    add_fusions(pm);
    add_cleanups(pm);  // fusions leave dead constants and repeated subexpressions behind
  } else {
    // The precision a user asks for is not an optimization: -O0 and -O1 still compute in it.
    pm.add(make_lower_precision(), wants_16_bit);
  }
  return pm;
}

std::vector<std::string> known_pass_names() {
  std::vector<std::string> names = build_pipeline(kMaxOptLevel).pass_names();
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

}  // namespace kiln::passes
