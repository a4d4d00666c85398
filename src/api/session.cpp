#include "kiln/session.h"

#include "api/tensor_info.h"
#ifdef KILN_HAVE_CUDA
#include "api/gpu_session.h"
#endif
#include "api/plan_load.h"
#include "builder/prepare_graph.h"
#include "core/error.h"
#include "runtime/cpu_executor.h"
#include "runtime/plan_file.h"

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
  if (runtime::is_plan_file(path)) return load_plan(path, options, session);
  std::string backend;
  KILN_RETURN_IF_ERROR(builder::resolve_backend(options.backend, &backend));
  std::unique_ptr<ir::Graph> g;
  KILN_RETURN_IF_ERROR(builder::prepare_graph(path, options, backend, &g));
  return create_session(std::move(g), backend, options, nullptr, session);
}

}  // namespace

Status create_session(std::unique_ptr<ir::Graph> g, const std::string& backend, const SessionOptions& options,
                      const GpuPlanTactics* from_plan, std::unique_ptr<Session>* session) {
#ifdef KILN_HAVE_CUDA
  if (backend == "cuda") {
    KILN_RETURN_IF_ERROR(create_gpu_session(g, options, session, from_plan));
    if (*session) return Status::OK();
  }
#else
  if (backend == "cuda") return unsupported("backend 'cuda': this kiln was built without the CUDA backend");
  (void)options;
  (void)from_plan;
#endif
  *session = std::make_unique<CpuSession>(std::move(g));
  return Status::OK();
}

Status Session::load(const std::string& path, const SessionOptions& options, std::unique_ptr<Session>* session) {
  session->reset();
  try {
    return load_impl(path, options, session);
  } catch (const std::exception& e) {
    return {StatusCode::kInternal, e.what()};
  }
}

}  // namespace kiln
