#include "api/gpu_session.h"

#include <cstdio>
#include <cstdlib>

#include "api/tensor_info.h"
#include "backends/gpu/device.h"
#include "core/error.h"
#include "runtime/cpu_executor.h"
#include "runtime/gpu_executor.h"

namespace kiln {
namespace {

class GpuSession final : public Session {
 public:
  GpuSession(std::unique_ptr<ir::Graph> g, std::unique_ptr<runtime::GpuExecutor> ex, bool cpu_when_unsupported)
      : graph_(std::move(g)), executor_(std::move(ex)), cpu_when_unsupported_(cpu_when_unsupported) {
    for (const ir::Value* v : graph_->inputs) inputs_.push_back(tensor_info_of(*v));
    for (const ir::Value* v : graph_->outputs) outputs_.push_back(tensor_info_of(*v));
  }
  ~GpuSession() override { executor_.reset(); }  // before the graph it points into
  const std::vector<TensorInfo>& inputs() const override { return inputs_; }
  const std::vector<TensorInfo>& outputs() const override { return outputs_; }
  std::string backend() const override { return "cuda"; }

  Status run(const std::map<std::string, Tensor>& inputs, std::vector<Tensor>* outputs) override {
    try {
      if (cpu_) return cpu_->run(inputs, outputs);
      Status st = executor_->run(inputs, outputs);
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

 private:
  std::unique_ptr<ir::Graph> graph_;
  std::unique_ptr<runtime::GpuExecutor> executor_;
  bool cpu_when_unsupported_;
  std::unique_ptr<runtime::CpuExecutor> cpu_;
  std::vector<TensorInfo> inputs_, outputs_;
};

}  // namespace

bool cuda_backend_available() { return gpu::device_count() > 0; }

Status create_gpu_session(std::unique_ptr<ir::Graph>& g, const SessionOptions& options, std::unique_ptr<Session>* out) {
  const std::string& p = options.precision;
  if (p != "fp32" && p != "tf32" && p != "fp16" && p != "bf16") {
    return invalid_argument("unknown precision '{}' (expected fp32, tf32, fp16 or bf16)", p);
  }
  runtime::GpuExecutorOptions eo;
  eo.instance.layer.precision = p;
  eo.instance.use_cuda_graph = options.use_cuda_graph;
  // KILN_GPU_VERBOSE=1 prints each plan's layers, tactics and memory plan when it is built.
  const char* verbose = std::getenv("KILN_GPU_VERBOSE");
  eo.instance.layer.verbose = verbose && *verbose && *verbose != '0';
  std::unique_ptr<runtime::GpuExecutor> ex;
  KILN_RETURN_IF_ERROR(runtime::GpuExecutor::create(*g, eo, &ex));
  std::vector<std::vector<int64_t>> shapes;
  bool all_static = true;
  for (const ir::Value* v : g->inputs) {
    all_static = all_static && v->type.is_concrete();
    if (all_static) shapes.push_back(v->type.concrete());
  }
  const bool is_auto = options.backend == "auto";
  if (all_static) {
    const Status st = ex->prepare(shapes);
    if (st.code() == StatusCode::kUnsupported && is_auto) return Status::OK();  // the caller runs it on the CPU
    KILN_RETURN_IF_ERROR(st);
    if (eo.instance.layer.verbose) std::fprintf(stderr, "%s", ex->last_instance()->describe().c_str());
  }
  *out = std::make_unique<GpuSession>(std::move(g), std::move(ex), is_auto);
  return Status::OK();
}

}  // namespace kiln
