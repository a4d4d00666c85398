// Runs a graph on one GPU. For every distinct set of input shapes it builds a GpuInstance
// (types, layers with timed tactics, memory plan, arena) once and keeps the most recent few
// (LRU), so a model called with a handful of batch sizes builds each only once.
#pragma once
#include <list>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backends/gpu/device.h"
#include "ir/graph.h"
#include "kiln/status.h"
#include "kiln/tensor.h"
#include "runtime/gpu_instance.h"

namespace kiln::runtime {

struct GpuExecutorOptions {
  GpuInstanceOptions instance;
  int device_id = 0;
  size_t max_instances = 8;  // input-shape sets kept built
};

class GpuExecutor {
 public:
  // Opens the device; a machine without a GPU gets a one-line kUnsupported Status.
  static Status create(const ir::Graph& g, const GpuExecutorOptions& options, std::unique_ptr<GpuExecutor>* out);

  // Checks inputs against the graph, builds the instance for their shapes if needed, runs it.
  Status run(const std::map<std::string, Tensor>& inputs, std::vector<Tensor>* outputs);
  // Builds (without running) the instance for these input shapes, in graph-input order.
  // A model whose plan needs the values of shape-tensor inputs (runtime/shape_plan.h) cannot be
  // built from shapes alone: then this returns OK, builds nothing, and `*built` (if given) is
  // false; the first run() with those values builds it.
  Status prepare(const std::vector<std::vector<int64_t>>& input_shapes, bool* built = nullptr);

  // The most recently used instance (nullptr before the first build), for reports, tests and
  // measurements.
  const GpuInstance* last_instance() const { return lru_.empty() ? nullptr : lru_.front().second.get(); }
  GpuInstance* last_instance() { return lru_.empty() ? nullptr : lru_.front().second.get(); }
  gpu::Device& device() { return *device_; }
  // Layers built from now on look tactics up in `cache` and record new winners there.
  void set_tactic_cache(TacticCache* cache) { options_.instance.layer.cache = cache; }
  size_t constant_bytes() const { return constants_.bytes(); }  // weights uploaded as they are

 private:
  GpuExecutor(const ir::Graph& g, const GpuExecutorOptions& options) : graph_(g), options_(options) {}
  // An instance is built for input shapes plus the values of the inputs that are shape tensors
  // (runtime/shape_plan.h); `values[i]` is input i's value when it may be one, else nullptr.
  struct InstanceKey {
    std::vector<std::vector<int64_t>> shapes;
    std::vector<std::string> values;  // bytes of each shape-tensor input ("" for the others)
    bool operator==(const InstanceKey&) const = default;
  };
  Status instance_for(const std::vector<std::vector<int64_t>>& shapes, const std::vector<const Tensor*>& values,
                      GpuInstance** out);
  // Which inputs are shape tensors, found once per shape set.
  Status value_inputs_for(const std::vector<std::vector<int64_t>>& shapes, const std::vector<const Tensor*>& values,
                          std::vector<bool>* needed);

  const ir::Graph& graph_;
  GpuExecutorOptions options_;
  std::unique_ptr<gpu::Device> device_;
  GpuConstantStore constants_;  // after device_: freed before the device goes
  std::list<std::pair<InstanceKey, std::unique_ptr<GpuInstance>>> lru_;
  std::map<std::vector<std::vector<int64_t>>, std::vector<bool>> value_inputs_;
};

}  // namespace kiln::runtime
