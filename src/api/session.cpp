#include "kiln/session.h"

#include "api/tensor_info.h"
#ifdef KILN_HAVE_CUDA
#include "api/gpu_session.h"
#endif
#include "builder/optimize.h"
#include "core/error.h"
#include "ir/verifier.h"
#include "onnx/importer.h"
#include "runtime/cpu_executor.h"
#include "runtime/shape_inference.h"

namespace kiln {
namespace {

class CpuSession final : public Session {
 public:
  explicit CpuSession(std::unique_ptr<ir::Graph> g) : graph_(std::move(g)), executor_(*graph_) {
    for (const ir::Value* v : graph_->inputs) inputs_.push_back(tensor_info_of(*v));
    for (const ir::Value* v : graph_->outputs) outputs_.push_back(tensor_info_of(*v));
  }
  const std::vector<TensorInfo>& inputs() const override { return inputs_; }
  const std::vector<TensorInfo>& outputs() const override { return outputs_; }
  std::string backend() const override { return "cpu"; }

  Status run(const std::map<std::string, Tensor>& inputs, std::vector<Tensor>* outputs) override {
    try {
      return executor_.run(inputs, outputs);
    } catch (const std::exception& e) {
      return {StatusCode::kInternal, e.what()};
    }
  }

 private:
  std::unique_ptr<ir::Graph> graph_;
  runtime::CpuExecutor executor_;
  std::vector<TensorInfo> inputs_, outputs_;
};

Status load_impl(const std::string& path, const SessionOptions& options, std::unique_ptr<Session>* session) {
  if (options.backend != "auto" && options.backend != "cpu" && options.backend != "cuda") {
    return invalid_argument("unknown backend '{}' (expected auto, cpu or cuda)", options.backend);
  }
#ifdef KILN_HAVE_CUDA
  const bool use_cuda = options.backend == "cuda" || (options.backend == "auto" && cuda_backend_available());
#else
  if (options.backend == "cuda") return unsupported("backend 'cuda': this kiln was built without the CUDA backend");
  const bool use_cuda = false;
#endif
  std::unique_ptr<ir::Graph> g;
  KILN_RETURN_IF_ERROR(onnx_io::import_model_file(path, &g));
  KILN_RETURN_IF_ERROR(runtime::infer_graph_types(*g));
  KILN_RETURN_IF_ERROR(ir::verify_graph(*g));
  builder::OptimizeOptions opt;
  opt.level = options.optimization_level;
  opt.backend = use_cuda ? "cuda" : "cpu";
  opt.precision = use_cuda ? options.precision : "fp32";  // the CPU backend computes in the model's types
  opt.disabled_passes.insert(options.disabled_passes.begin(), options.disabled_passes.end());
  opt.dump = options.dump_passes || options.dump_pass_graphs;
  opt.dump_graph = options.dump_pass_graphs;
  opt.prefer_channels_last = options.prefer_channels_last;
  builder::apply_environment(&opt);
  KILN_RETURN_IF_ERROR(builder::optimize_graph(*g, opt));
#ifdef KILN_HAVE_CUDA
  if (use_cuda) {
    KILN_RETURN_IF_ERROR(create_gpu_session(g, options, session));
    if (*session) return Status::OK();
  }
#endif
  *session = std::make_unique<CpuSession>(std::move(g));
  return Status::OK();
}

}  // namespace

Status Session::load(const std::string& path, const SessionOptions& options, std::unique_ptr<Session>* session) {
  session->reset();
  try {
    return load_impl(path, options, session);
  } catch (const std::exception& e) {
    return {StatusCode::kInternal, e.what()};
  }
}

}  // namespace kiln
