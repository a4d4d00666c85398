// One built network for one set of input shapes: a layer per node, a memory plan, one arena,
// one workspace, pinned staging buffers, and (after the first run) a CUDA graph of the layers.
// Built once, then run many times with no allocation on the device.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backends/gpu/device.h"
#include "backends/gpu/layer.h"
#include "ir/graph.h"
#include "kiln/session.h"
#include "kiln/status.h"
#include "runtime/memory_plan.h"

namespace kiln::runtime {

// Device copies of the graph's constants, shared by all instances of one executor.
class GpuConstantStore {
 public:
  const void* get(const ir::Value* v);  // uploads on first use
  size_t bytes() const { return bytes_; }

 private:
  std::map<const ir::Value*, gpu::DeviceBuffer> buffers_;
  size_t bytes_ = 0;
};

struct GpuInstanceOptions {
  gpu::LayerBuildOptions layer;
  bool use_cuda_graph = true;
};

class GpuInstance {
 public:
  // `shape_values[i]`: the value of input i when it is a shape tensor this instance is built
  // for (see runtime/shape_plan.h), else nullptr.
  static Status build(const ir::Graph& g, const std::vector<std::vector<int64_t>>& input_shapes,
                      const std::vector<const Tensor*>& shape_values, const GpuInstanceOptions& options,
                      gpu::Device& device, GpuConstantStore& constants, std::unique_ptr<GpuInstance>* out);
  ~GpuInstance();

  // Inputs in graph-input order, already checked against the shapes this instance was built for.
  Status run(const std::vector<const Tensor*>& inputs, std::vector<Tensor>* outputs);

  // Layers with their tactics, then the memory plan (what `kiln plan-info` prints).
  std::string describe() const;

  // Replays the network on the inputs the last run() left on the device, timing each replay
  // with device events (see BenchResult). Needs one run() first.
  Status time_runs(const BenchOptions& options, std::vector<double>* run_ms);
  // Mean time per layer over `iterations` layer-by-layer replays, each layer between two
  // events (launch gaps of an eager replay count to the layer after them).
  Status profile_layers(int iterations, std::vector<LayerTime>* layers);

  size_t arena_bytes() const { return arena_.bytes(); }
  size_t workspace_bytes() const { return workspace_.bytes(); }
  size_t layer_weight_bytes() const;  // re-laid weights the layers own
  size_t layer_count() const { return layers_.size(); }
  std::string layer_tactic(size_t i) const;
  const ir::Node& layer_node(size_t i) const { return *steps_[i].node; }
  const MemoryPlan& memory_plan() const { return plan_; }
  int fallback_count() const;
  bool graph_captured() const { return graph_exec_ != nullptr; }

  struct Step {
    const ir::Node* node = nullptr;
    std::string fallback_reason;  // non-empty when the node runs through the host fallback
  };
  // A graph output is read back from the arena, or (computed at build, or a constant) is a
  // host tensor already.
  struct Output {
    const void* device = nullptr;
    gpu::TensorDesc desc;
    gpu::PinnedBuffer staging;
    Tensor host;
  };

 private:
  GpuInstance() = default;
  void enqueue_layers();
  void capture_graph();

  gpu::Device* device_ = nullptr;
  GpuInstanceOptions options_;
  std::vector<Step> steps_;
  std::vector<std::unique_ptr<gpu::Layer>> layers_;
  std::vector<gpu::LaunchArgs> launches_;
  std::vector<void*> input_slots_;     // arena address of each graph input
  std::vector<gpu::PinnedBuffer> input_staging_;
  std::vector<Output> outputs_;
  std::vector<PlanTensor> plan_tensors_;
  MemoryPlan plan_;
  gpu::DeviceBuffer arena_, workspace_;
  std::vector<gpu::DeviceBuffer> folded_buffers_;  // build-time values the layers read
  std::map<const ir::Value*, Tensor> folded_;
  std::vector<std::unique_ptr<ir::Node>> planner_nodes_;  // Identity nodes of inlined Ifs (steps_ point here)
  bool all_capturable_ = true;
  int runs_ = 0;
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t graph_exec_ = nullptr;
};

}  // namespace kiln::runtime
