// Session: load a model, set inputs, run, read outputs.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln {

struct SessionOptions {
  // "auto" picks the best backend present (the GPU when there is one), or "cpu".
  std::string backend = "auto";
  // Graph optimization: 0 = as imported, 1 = clean-ups and constant folding, 2 = also
  // fusions and layout (default).
  int optimization_level = 2;
  // Passes to skip by name (see `kiln inspect --dump-passes`); an unknown name is an error.
  std::vector<std::string> disabled_passes;
  // Print each pass's time and node counts to stderr while loading (also KILN_DUMP_PASSES=1).
  bool dump_passes = false;
  // Also print the graph after each pass that changed it (also KILN_DUMP_PASSES=graph).
  bool dump_pass_graphs = false;
  // Lay convolutions out channels-last (NHWC) even where the backend does not ask for it
  // (to see the layout pass at work on the CPU; the numbers stay the same).
  bool prefer_channels_last = false;
  // GPU arithmetic: "fp32" (strict IEEE fp32, no TF32), "tf32" (fp32 tensors, TF32 tensor
  // cores), "fp16" or "bf16" (half-precision tensors where accuracy allows).
  std::string precision = "fp32";
  // Record each input shape's layers as one CUDA graph after its first run and replay it.
  bool use_cuda_graph = true;
  // GPU tactic timing cache on disk (layer shape, dtype, GPU and library versions -> the
  // winning tactic), so a rebuild skips the timing. Empty: $KILN_TIMING_CACHE, else
  // ~/.cache/kiln/timing_cache.json; "none": no cache file.
  std::string timing_cache_path;
  // Print every layer's chosen tactic and time while building (`kiln build --verbose`), and a
  // progress bar on a terminal.
  bool verbose = false;
  // The GPU to run on (CUDA device ordinal); `kiln serve --devices` loads one session per GPU.
  int device_id = 0;
};

// Options of Session::benchmark.
struct BenchOptions {
  int warmup_runs = 10;
  int min_runs = 100;         // timed runs: at least this many ...
  double min_seconds = 1.0;   // ... and at least this long
  int max_runs = 100000;
};

// What Session::benchmark measured. On the GPU each run is timed with device events around
// the network (inputs already on the device, as a serving loop keeps them); on the CPU with
// the host clock around run().
struct BenchResult {
  std::vector<double> run_ms;  // one entry per timed run, in run order
  std::string timer;           // "gpu-events" or "host-clock"
  bool graph_captured = false;
  // Device memory: kiln's own allocations at their peak (weights, arena, workspace, staging
  // excluded), and the process's use as the driver reports it (includes the CUDA context).
  size_t peak_device_bytes = 0;
  size_t process_device_bytes = 0;
  size_t arena_bytes = 0, workspace_bytes = 0, weight_bytes = 0;
  // Host-clock latency of the whole run() (copies in and out included), median ms; 0 when
  // not measured.
  double end_to_end_median_ms = 0;
};

// One layer's time in Session::profile.
struct LayerTime {
  std::string name;     // node name
  std::string op_type;  // e.g. "FusedConv"
  std::string tactic;   // the implementation chosen at build
  double ms = 0;        // mean per run
};

// Name, element type and shape of a model input or output. A dynamic dimension is -1 and
// its symbolic name (if the model gives one) is in `dim_names`.
struct TensorInfo {
  std::string name;
  DType dtype = DType::kUndefined;
  std::vector<int64_t> shape;
  std::vector<std::string> dim_names;
  bool has_shape = false;
};

class Session {
 public:
  virtual ~Session() = default;

  // Loads an ONNX model file. On failure `*session` is left empty and the Status says why.
  static Status load(const std::string& path, const SessionOptions& options,
                     std::unique_ptr<Session>* session);

  virtual const std::vector<TensorInfo>& inputs() const = 0;
  virtual const std::vector<TensorInfo>& outputs() const = 0;
  virtual std::string backend() const = 0;

  // Runs the model on `inputs` (by name); fills `outputs` in the order of outputs().
  virtual Status run(const std::map<std::string, Tensor>& inputs, std::vector<Tensor>* outputs) = 0;

  // Runs the model repeatedly on `inputs` and times each run (see BenchResult). The default
  // times run() with the host clock.
  virtual Status benchmark(const std::map<std::string, Tensor>& inputs, const BenchOptions& options,
                           BenchResult* result);

  // Time per layer over `iterations` runs on `inputs`, in execution order. GPU sessions only;
  // the default says the backend cannot.
  virtual Status profile(const std::map<std::string, Tensor>& inputs, int iterations, std::vector<LayerTime>* layers);
};

}  // namespace kiln
