#include "api/plan_load.h"

#include <filesystem>

#ifdef KILN_HAVE_CUDA
#include "api/gpu_session.h"
#endif
#include "core/error.h"
#include "ir/verifier.h"
#include "onnx/importer.h"
#include "runtime/plan_file.h"
#include "runtime/shape_inference.h"

namespace kiln {
namespace {

// The plan's tactics and shape sets, as the GPU session takes them.
Status plan_tactics(const nlohmann::json& header, GpuPlanTactics* out) {
  try {
    out->tactics = header.at("tactics").get<std::map<std::string, std::string>>();
    for (const auto& set : header.at("shape_sets")) {
      out->shape_sets.push_back(set.at("inputs").get<ShapeSet>());
    }
  } catch (const nlohmann::json::exception& e) {
    return invalid_model("corrupt plan file: the header's tactics or shape sets are malformed ({})", e.what());
  }
  return Status::OK();
}

// A plan runs only on the backend it was built for.
Status check_backend(const std::string& plan_backend, const SessionOptions& options) {
  if (plan_backend == "cuda" && options.backend == "cpu") {
    return invalid_argument("this plan was built for the CUDA backend; to run on the CPU, load the .onnx model");
  }
  if (plan_backend == "cpu" && options.backend == "cuda") {
    return invalid_argument(
        "this plan was built for the CPU backend (graph only); build one with `kiln build --backend cuda`, or load "
        "the .onnx model");
  }
#ifdef KILN_HAVE_CUDA
  if (plan_backend == "cuda" && !cuda_backend_available()) {
    return unsupported("this plan was built for the CUDA backend, and no usable GPU is present (see `kiln doctor`)");
  }
#else
  if (plan_backend == "cuda") return unsupported("this plan was built for the CUDA backend; this kiln has no CUDA backend");
#endif
  return Status::OK();
}

// The plan's optimized graph, imported (the graph bytes are released).
Status import_plan_graph(const std::string& path, runtime::PlanFile* plan, std::unique_ptr<ir::Graph>* g) {
  const std::string dir = std::filesystem::path(path).parent_path().string();
  KILN_RETURN_IF_ERROR(onnx_io::import_model_bytes(plan->graph_bytes, dir.empty() ? "." : dir, g).with_context(path));
  std::string().swap(plan->graph_bytes);
  return Status::OK();
}

}  // namespace

Status import_model_or_plan(const std::string& path, std::unique_ptr<ir::Graph>* g) {
  if (!runtime::is_plan_file(path)) return onnx_io::import_model_file(path, g);
  runtime::PlanFile plan;
  KILN_RETURN_IF_ERROR(runtime::read_plan_file(path, &plan));
  return import_plan_graph(path, &plan, g);
}

Status load_plan(const std::string& path, const SessionOptions& options, std::unique_ptr<Session>* session) {
  runtime::PlanFile plan;
  KILN_RETURN_IF_ERROR(runtime::read_plan_file(path, &plan));
  const std::string backend = plan.header["backend"];
  KILN_RETURN_IF_ERROR(check_backend(backend, options).with_context(path));
  GpuPlanTactics tactics;
  if (backend == "cuda") {
#ifdef KILN_HAVE_CUDA
    KILN_RETURN_IF_ERROR(check_gpu_plan_environment(plan.header["environment"], path));
#endif
    KILN_RETURN_IF_ERROR(plan_tactics(plan.header, &tactics).with_context(path));
  }
  // The graph is the optimizer's output already: import and type it, no second optimization.
  std::unique_ptr<ir::Graph> g;
  KILN_RETURN_IF_ERROR(import_plan_graph(path, &plan, &g));
  KILN_RETURN_IF_ERROR(runtime::infer_graph_types(*g).with_context(path));
  KILN_RETURN_IF_ERROR(ir::verify_graph(*g).with_context(path));

  SessionOptions plan_options = options;
  // "auto" stays (a GPU session may then leave what the GPU cannot plan to the CPU).
  if (options.backend != "auto") plan_options.backend = backend;
  plan_options.precision = plan.header["precision"];
  plan_options.optimization_level = plan.header.value("optimization_level", options.optimization_level);
  plan_options.prefer_channels_last = plan.header.value("prefer_channels_last", false);
  return create_session(std::move(g), backend, plan_options, backend == "cuda" ? &tactics : nullptr, session);
}

}  // namespace kiln
