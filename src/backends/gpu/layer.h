// GPU layers: what one graph node becomes on the GPU for concrete input shapes. A factory per
// op type builds a Layer at build time (choosing its tactic, preparing weights); at run time
// the executor only calls enqueue(), which must launch work on the given stream and nothing
// else (no allocation, no synchronization), so the whole network can be captured as one
// CUDA graph.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backends/gpu/vendors/cuda.h"
#include "ir/graph.h"
#include "kiln/status.h"
#include "kiln/tensor.h"
#include "runtime/tactic_cache.h"

namespace kiln::gpu {

class Device;  // device.h: properties, library handles, the build stream

// A tensor's element type and concrete shape, densely packed in the layout its shape says.
struct TensorDesc {
  DType dtype = DType::kUndefined;  // kUndefined marks an absent optional input/output
  std::vector<int64_t> shape;

  bool present() const { return dtype != DType::kUndefined; }
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
  size_t bytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype); }
};

struct LayerBuildOptions {
  std::string precision = "fp32";  // fp32 (strict: no TF32), tf32, fp16, bf16
  bool time_tactics = true;        // time candidate implementations on the device
  bool verbose = false;
  // Winners of earlier timings (nullptr: none). A layer that times candidates looks its key
  // up first and puts the winner after (see runtime/tactic_cache.h).
  runtime::TacticCache* cache = nullptr;
};

// What a layer factory sees when building a node for concrete shapes.
struct LayerBuildContext {
  const ir::Node& node;
  std::vector<TensorDesc> inputs;
  std::vector<TensorDesc> outputs;
  // Host value of each input that is a constant (weights), nullptr otherwise. A layer may
  // upload its own re-laid copy (owned by the layer); otherwise it reads the executor's copy
  // passed in LaunchArgs like any other input.
  std::vector<const Tensor*> constants;
  Device& device;
  const LayerBuildOptions& options;
};

// Device pointers for one enqueue (nullptr for absent inputs/outputs).
struct LaunchArgs {
  std::vector<const void*> inputs;
  std::vector<void*> outputs;
  void* workspace = nullptr;  // workspace_bytes() bytes, shared by all layers
  cudaStream_t stream = nullptr;
};

class Layer {
 public:
  virtual ~Layer() = default;
  // The chosen implementation, e.g. "cudnn fused conv algo 1" or "kiln eltwise v4 b256";
  // `kiln build --verbose` prints it per layer.
  virtual std::string tactic() const = 0;
  virtual size_t workspace_bytes() const { return 0; }
  // Device memory the layer owns (re-laid weights), for the memory report.
  virtual size_t weight_bytes() const { return 0; }
  virtual void enqueue(const LaunchArgs& args) = 0;
  // False for layers that synchronize or run on the host (then the graph is not captured).
  virtual bool capturable() const { return true; }
  // True when output 0 may share input 0's memory (reshapes, in-place elementwise).
  virtual bool aliases_input0() const { return false; }
  // False when the layer never reads constant input i through LaunchArgs (it keeps its own
  // re-laid copy of the weights), so the executor need not upload that constant.
  virtual bool reads_constant_input(size_t i) const { return true; }
};

// Builds a layer for ctx.node; returns kUnsupported (with a reason) when this factory cannot
// handle the node's dtypes or attributes, so the caller can report it.
using LayerFactory = std::function<Status(LayerBuildContext&, std::unique_ptr<Layer>*)>;

class LayerRegistry {
 public:
  static LayerRegistry& instance();
  void add(const std::string& domain, const std::string& op_type, LayerFactory factory);
  const LayerFactory* find(const std::string& domain, const std::string& op_type) const;
  std::vector<std::string> op_types() const;

 private:
  LayerRegistry();
  std::map<std::pair<std::string, std::string>, LayerFactory> factories_;
};

// Each family registers its layers through one function, called from LayerRegistry's
// constructor (layer_registry.cpp). Add yours to that list.

}  // namespace kiln::gpu
