#include "builder/prepare_graph.h"

#ifdef KILN_HAVE_CUDA
#include "api/gpu_session.h"
#endif
#include "builder/optimize.h"
#include "core/error.h"
#include "ir/verifier.h"
#include "onnx/importer.h"
#include "runtime/shape_inference.h"

namespace kiln::builder {

Status resolve_backend(const std::string& requested, std::string* backend) {
  if (requested != "auto" && requested != "cpu" && requested != "cuda") {
    return invalid_argument("unknown backend '{}' (expected auto, cpu or cuda)", requested);
  }
#ifdef KILN_HAVE_CUDA
  const bool use_cuda = requested == "cuda" || (requested == "auto" && cuda_backend_available());
#else
  if (requested == "cuda") return unsupported("backend 'cuda': this kiln was built without the CUDA backend");
  const bool use_cuda = false;
#endif
  *backend = use_cuda ? "cuda" : "cpu";
  return Status::OK();
}

std::string effective_precision(const SessionOptions& options, const std::string& backend) {
  return backend == "cuda" ? options.precision : "fp32";
}

Status prepare_graph(const std::string& model_path, const SessionOptions& options, const std::string& backend,
                     std::unique_ptr<ir::Graph>* out) {
  std::unique_ptr<ir::Graph> g;
  KILN_RETURN_IF_ERROR(onnx_io::import_model_file(model_path, &g));
  KILN_RETURN_IF_ERROR(runtime::infer_graph_types(*g));
  KILN_RETURN_IF_ERROR(ir::verify_graph(*g));
  OptimizeOptions opt;
  opt.level = options.optimization_level;
  opt.backend = backend;
  opt.precision = effective_precision(options, backend);
  opt.disabled_passes.insert(options.disabled_passes.begin(), options.disabled_passes.end());
  opt.dump = options.dump_passes || options.dump_pass_graphs;
  opt.dump_graph = options.dump_pass_graphs;
  opt.prefer_channels_last = options.prefer_channels_last;
  apply_environment(&opt);
  KILN_RETURN_IF_ERROR(optimize_graph(*g, opt));
  *out = std::move(g);
  return Status::OK();
}

}  // namespace kiln::builder
