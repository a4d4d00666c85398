#include "api/gpu_session.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "api/tensor_info.h"
#include "backends/gpu/check.h"
#include "backends/gpu/device.h"
#include "core/error.h"
#include "runtime/cpu_executor.h"
#include "runtime/gpu_executor.h"
#include "runtime/tactic_cache.h"

namespace kiln {
namespace {

class GpuSession final : public Session {
 public:
  GpuSession(std::unique_ptr<ir::Graph> g, std::unique_ptr<runtime::GpuExecutor> ex,
             std::unique_ptr<runtime::TacticCache> cache, std::string cache_path, size_t entries_on_disk,
             bool cpu_when_unsupported)
      : graph_(std::move(g)),
        cache_(std::move(cache)),
        cache_path_(std::move(cache_path)),
        saved_entries_(entries_on_disk),
        executor_(std::move(ex)),
        cpu_when_unsupported_(cpu_when_unsupported) {
    for (const ir::Value* v : graph_->inputs) inputs_.push_back(tensor_info_of(*v));
    for (const ir::Value* v : graph_->outputs) outputs_.push_back(tensor_info_of(*v));
    save_new_tactics();  // what the load built
  }
  ~GpuSession() override { executor_.reset(); }  // before the graph it points into
  const std::vector<TensorInfo>& inputs() const override { return inputs_; }
  const std::vector<TensorInfo>& outputs() const override { return outputs_; }
  std::string backend() const override { return "cuda"; }

  Status run(const std::map<std::string, Tensor>& inputs, std::vector<Tensor>* outputs) override {
    try {
      if (cpu_) return cpu_->run(inputs, outputs);
      Status st = executor_->run(inputs, outputs);
      save_new_tactics();
      if (st.code() == StatusCode::kUnsupported && cpu_when_unsupported_) {
        std::fprintf(stderr, "kiln: warning: running on the CPU: %s\n", st.message().c_str());
        cpu_ = std::make_unique<runtime::CpuExecutor>(*graph_);
        return cpu_->run(inputs, outputs);
      }
      return st;
    } catch (const std::exception& e) {
      return {StatusCode::kInternal, e.what()};
    }
  }

  Status benchmark(const std::map<std::string, Tensor>& inputs, const BenchOptions& options,
                   BenchResult* result) override {
    try {
      runtime::GpuInstance* inst = nullptr;
      KILN_RETURN_IF_ERROR(warm_instance(inputs, &inst));
      *result = BenchResult{};
      // Host-clock end-to-end latency (copies in and out included), for context.
      std::vector<Tensor> outputs;
      std::vector<double> e2e;
      for (int i = 0; i < 20; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        KILN_RETURN_IF_ERROR(executor_->run(inputs, &outputs));
        e2e.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      }
      std::sort(e2e.begin(), e2e.end());
      result->end_to_end_median_ms = e2e[e2e.size() / 2];
      KILN_RETURN_IF_ERROR(inst->time_runs(options, &result->run_ms));
      result->timer = "gpu-events";
      result->graph_captured = inst->graph_captured();
      result->peak_device_bytes = gpu::device_bytes_peak();
      size_t free_b = 0, total_b = 0;
      KILN_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
      result->process_device_bytes = total_b - free_b;
      result->arena_bytes = inst->arena_bytes();
      result->workspace_bytes = inst->workspace_bytes();
      result->weight_bytes = inst->layer_weight_bytes() + executor_->constant_bytes();
      return Status::OK();
    } catch (const gpu::GpuError& e) {
      return {StatusCode::kInternal, e.what()};
    }
  }

  Status profile(const std::map<std::string, Tensor>& inputs, int iterations, std::vector<LayerTime>* layers) override {
    try {
      runtime::GpuInstance* inst = nullptr;
      KILN_RETURN_IF_ERROR(warm_instance(inputs, &inst));
      return inst->profile_layers(iterations, layers);
    } catch (const gpu::GpuError& e) {
      return {StatusCode::kInternal, e.what()};
    }
  }

 private:
  // Builds the instance for these inputs (outside any measurement), resets the memory peak so
  // build-time scratch does not count, and runs twice: inputs land on the device and the
  // CUDA graph is captured.
  Status warm_instance(const std::map<std::string, Tensor>& inputs, runtime::GpuInstance** inst) {
    if (cpu_) return unsupported("this model runs on the CPU (the GPU could not plan it): nothing to time on the GPU");
    std::vector<std::vector<int64_t>> shapes;
    for (const ir::Value* in : graph_->inputs) {
      auto it = inputs.find(in->name);
      if (it == inputs.end()) return invalid_argument("input '{}' is missing", in->name);
      shapes.push_back(it->second.shape());
    }
    KILN_RETURN_IF_ERROR(executor_->prepare(shapes));
    save_new_tactics();
    gpu::reset_device_bytes_peak();
    std::vector<Tensor> outputs;
    for (int i = 0; i < 2; ++i) KILN_RETURN_IF_ERROR(executor_->run(inputs, &outputs));
    *inst = executor_->last_instance();
    return Status::OK();
  }

  // Writes the timing cache to disk when a build added entries (a failed write only warns:
  // the cache is an optimization).
  void save_new_tactics() {
    if (!cache_ || cache_path_.empty()) return;
    const size_t n = cache_->size();
    if (n == saved_entries_) return;
    saved_entries_ = n;
    const Status st = cache_->save(cache_path_);
    if (!st.ok()) std::fprintf(stderr, "kiln: warning: %s\n", st.message().c_str());
  }

  std::unique_ptr<ir::Graph> graph_;
  std::unique_ptr<runtime::TacticCache> cache_;
  std::string cache_path_;
  size_t saved_entries_ = 0;
  std::unique_ptr<runtime::GpuExecutor> executor_;
  bool cpu_when_unsupported_;
  std::unique_ptr<runtime::CpuExecutor> cpu_;
  std::vector<TensorInfo> inputs_, outputs_;
};

}  // namespace

bool cuda_backend_available() { return gpu::device_count() > 0; }

Status create_gpu_session(std::unique_ptr<ir::Graph>& g, const SessionOptions& options, std::unique_ptr<Session>* out,
                          const GpuPlanTactics* from_plan) {
  const std::string& p = options.precision;
  if (p != "fp32" && p != "tf32" && p != "fp16" && p != "bf16") {
    return invalid_argument("unknown precision '{}' (expected fp32, tf32, fp16 or bf16)", p);
  }
  runtime::GpuExecutorOptions eo;
  eo.device_id = options.device_id;
  eo.instance.layer.precision = p;
  eo.instance.use_cuda_graph = options.use_cuda_graph;
  // KILN_GPU_VERBOSE=1 prints each plan's layers, tactics and memory plan when it is built.
  const char* verbose = std::getenv("KILN_GPU_VERBOSE");
  eo.instance.layer.verbose = options.verbose || (verbose && *verbose && *verbose != '0');
  std::unique_ptr<runtime::GpuExecutor> ex;
  KILN_RETURN_IF_ERROR(runtime::GpuExecutor::create(*g, eo, &ex));

  // The timing cache: the plan's tactics first, then the file on disk.
  auto cache = std::make_unique<runtime::TacticCache>(gpu_environment_fingerprint(ex->device()));
  if (from_plan) cache->merge(from_plan->tactics);
  const std::string cache_path = runtime::TacticCache::path_for(options.timing_cache_path);
  cache->load_or_warn(cache_path);
  const size_t entries_on_disk = cache->size();
  ex->set_tactic_cache(cache.get());

  std::vector<ShapeSet> prepare;
  if (from_plan) prepare = from_plan->shape_sets;
  ShapeSet shapes;
  bool all_static = true;
  for (const ir::Value* v : g->inputs) {
    all_static = all_static && v->type.is_concrete();
    if (all_static) shapes.push_back(v->type.concrete());
  }
  if (prepare.empty() && all_static) prepare.push_back(shapes);
  const bool is_auto = options.backend == "auto";
  for (const ShapeSet& s : prepare) {
    bool built = false;
    const Status st = ex->prepare(s, &built);
    if (st.code() == StatusCode::kUnsupported && is_auto) return Status::OK();  // the caller runs it on the CPU
    KILN_RETURN_IF_ERROR(st);
    if (eo.instance.layer.verbose && built) std::fprintf(stderr, "%s", ex->last_instance()->describe().c_str());
  }
  auto session = std::make_unique<GpuSession>(std::move(g), std::move(ex), std::move(cache), cache_path, entries_on_disk,
                                              is_auto);
  *out = std::move(session);
  return Status::OK();
}

}  // namespace kiln
