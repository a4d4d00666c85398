// CPU kernels for control-flow ops: If runs the branch its condition selects.
#include "backends/cpu/kernel.h"
#include "core/error.h"

namespace kiln::cpu {
namespace {

Status if_kernel(KernelContext& ctx) {
  const Tensor& cond = ctx.input(0);
  if (cond.numel() != 1) return invalid_argument("If condition must have exactly one element, got {}", cond.numel());
  const bool take_then = *cond.data_as<bool>();
  const ir::Graph* branch = ctx.node().attr_g(take_then ? "then_branch" : "else_branch");
  KILN_ASSERT(branch != nullptr, "If without branches passed inference");
  std::vector<Tensor> outs;
  KILN_RETURN_IF_ERROR(ctx.run_subgraph(*branch, &outs));
  KILN_ASSERT(outs.size() == static_cast<size_t>(ctx.num_outputs()), "branch output count checked by inference");
  for (int i = 0; i < ctx.num_outputs(); ++i) ctx.set_output(i, std::move(outs[i]));
  return Status::OK();
}

}  // namespace

void register_control_kernels(KernelRegistry& r) { r.add("If", if_kernel); }

}  // namespace kiln::cpu
