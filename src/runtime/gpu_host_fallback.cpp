#include "runtime/gpu_host_fallback.h"

#include <fmt/format.h>

#include "backends/gpu/check.h"
#include "runtime/cpu_executor.h"
#include "runtime/node_eval.h"

namespace kiln::runtime {
namespace {

class HostFallbackLayer final : public gpu::Layer {
 public:
  HostFallbackLayer(const gpu::LayerBuildContext& ctx, std::string reason)
      : node_(ctx.node), reason_(std::move(reason)), outputs_(ctx.outputs) {
    // Host copies are allocated once here; constants are read straight from the graph.
    for (size_t i = 0; i < ctx.inputs.size(); ++i) {
      const gpu::TensorDesc& d = ctx.inputs[i];
      const Tensor* c = i < ctx.constants.size() ? ctx.constants[i] : nullptr;
      constants_.push_back(c);
      host_inputs_.push_back(d.present() && !c ? Tensor::uninitialized(d.dtype, d.shape) : Tensor());
    }
  }

  std::string tactic() const override { return "cpu-fallback (" + reason_ + ")"; }
  bool capturable() const override { return false; }
  bool reads_constant_input(size_t i) const override { return false; }

  void enqueue(const gpu::LaunchArgs& args) override {
    std::vector<const Tensor*> ins(host_inputs_.size(), nullptr);
    for (size_t i = 0; i < host_inputs_.size(); ++i) {
      if (constants_[i]) {
        ins[i] = constants_[i];
      } else if (host_inputs_[i].defined()) {
        if (host_inputs_[i].nbytes() > 0) {
          KILN_CUDA_CHECK(cudaMemcpyAsync(host_inputs_[i].data(), args.inputs[i], host_inputs_[i].nbytes(),
                                          cudaMemcpyDeviceToHost, args.stream));
        }
        ins[i] = &host_inputs_[i];
      }
    }
    KILN_CUDA_CHECK(cudaStreamSynchronize(args.stream));
    // An If's branches read enclosing values; the planner made them inputs of this node.
    auto run_subgraph = [this, &ins](const ir::Graph& sub, std::vector<Tensor>* outs) {
      auto outer = [this, &ins](const ir::Value* v) -> const Tensor* {
        for (size_t i = 0; i < node_.inputs.size(); ++i) {
          if (node_.inputs[i] == v) return ins[i];
        }
        return v->constant ? &*v->constant : nullptr;
      };
      return run_subgraph_on_cpu(sub, outer, outs);
    };
    std::vector<Tensor> outs;
    const Status st = eval_node(node_, ins, run_subgraph, &outs);
    if (!st.ok()) throw gpu::GpuError("cpu-fallback of " + node_.describe() + " failed: " + st.to_string());
    for (size_t i = 0; i < outputs_.size(); ++i) {
      if (!args.outputs[i] || !outs[i].defined()) continue;
      if (outs[i].shape() != outputs_[i].shape || outs[i].dtype() != outputs_[i].dtype) {
        throw gpu::GpuError(fmt::format("cpu-fallback of {}: output {} is {} {} but the plan expected {} {}",
                                        node_.describe(), i, dtype_name(outs[i].dtype()), shape_to_string(outs[i].shape()),
                                        dtype_name(outputs_[i].dtype), shape_to_string(outputs_[i].shape)));
      }
      // Synchronous: `outs` is freed on return, so the copy must finish before.
      if (outs[i].nbytes() > 0) KILN_CUDA_CHECK(cudaMemcpy(args.outputs[i], outs[i].data(), outs[i].nbytes(), cudaMemcpyHostToDevice));
    }
  }

 private:
  const ir::Node& node_;
  std::string reason_;
  std::vector<gpu::TensorDesc> outputs_;
  std::vector<const Tensor*> constants_;
  std::vector<Tensor> host_inputs_;
};

}  // namespace

std::unique_ptr<gpu::Layer> make_host_fallback_layer(const gpu::LayerBuildContext& ctx, std::string reason) {
  return std::make_unique<HostFallbackLayer>(ctx, std::move(reason));
}

}  // namespace kiln::runtime
