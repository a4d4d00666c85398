#include "api/gpu_plan.h"

#include <fmt/format.h>

#include "backends/gpu/check.h"
#include "backends/gpu/device.h"
#include "core/error.h"
#include "runtime/gpu_executor.h"
#include "runtime/tactic_cache.h"

namespace kiln {
namespace {

// Major.minor of a "9.14.0"-style version: tactics are only valid within one minor release
// of cuDNN/cuBLAS (their kernel sets change between minors).
std::string major_minor(const std::string& v) {
  const size_t first = v.find('.');
  if (first == std::string::npos) return v;
  const size_t second = v.find('.', first + 1);
  return v.substr(0, second);
}

nlohmann::json describe_instance(const runtime::GpuInstance& inst, const ShapeSet& shapes, size_t constant_bytes) {
  nlohmann::json layers = nlohmann::json::array();
  for (size_t i = 0; i < inst.layer_count(); ++i) {
    const ir::Node& n = inst.layer_node(i);
    layers.push_back({{"name", n.name.empty() ? n.describe() : n.name}, {"op", n.op_type}, {"tactic", inst.layer_tactic(i)}});
  }
  const size_t weights = constant_bytes + inst.layer_weight_bytes();
  nlohmann::json memory = {{"weights", weights},
                           {"arena", inst.arena_bytes()},
                           {"workspace", inst.workspace_bytes()},
                           {"peak", weights + inst.arena_bytes() + inst.workspace_bytes()},
                           {"tensors_unplanned", inst.memory_plan().total_bytes}};
  return {{"inputs", shapes}, {"layers", layers}, {"memory", memory}};
}

}  // namespace

std::string gpu_environment_fingerprint(gpu::Device& device) {
  const gpu::LibraryVersions v = gpu::library_versions();
  return fmt::format("{} sm_{} cudnn {} cublas {}", device.props().name, device.sm(),
                     major_minor(gpu::cudnn_version_string(v.cudnn_found)),
                     major_minor(gpu::cublas_version_string(v.cublas_found)));
}

nlohmann::json current_gpu_environment() {
  nlohmann::json env;
  const gpu::LibraryVersions v = gpu::library_versions();
  env["driver"] = gpu::cuda_version_string(v.driver);
  env["cuda_runtime"] = gpu::cuda_version_string(v.runtime_found);
  env["cudnn"] = gpu::cudnn_version_string(v.cudnn_found);
  env["cublas"] = gpu::cublas_version_string(v.cublas_found);
  if (gpu::device_count() > 0) {
    gpu::Device dev(0);
    env["gpu"] = dev.props().name;
    env["sm"] = dev.sm();
  }
  return env;
}

Status check_gpu_plan_environment(const nlohmann::json& built_for, const std::string& plan_path) {
  const nlohmann::json here = current_gpu_environment();
  const std::string rebuild = fmt::format("rebuild it here: kiln build MODEL.onnx -o {}", plan_path);
  if (!here.contains("sm")) return unsupported("plan '{}' needs a GPU and this machine has none", plan_path);
  auto get = [](const nlohmann::json& j, const char* k) {
    return j.contains(k) ? (j[k].is_string() ? j[k].get<std::string>() : j[k].dump()) : std::string("?");
  };
  if (get(built_for, "sm") != get(here, "sm")) {
    return invalid_argument("plan '{}' was built for sm_{} ({}) but this GPU is sm_{} ({}); {}", plan_path,
                            get(built_for, "sm"), get(built_for, "gpu"), get(here, "sm"), get(here, "gpu"), rebuild);
  }
  for (const char* lib : {"cudnn", "cublas"}) {
    if (major_minor(get(built_for, lib)) != major_minor(get(here, lib))) {
      return invalid_argument("plan '{}' was built with {} {} but this machine has {} {}; {}", plan_path, lib,
                              get(built_for, lib), lib, get(here, lib), rebuild);
    }
  }
  // The CUDA runtime kiln loads must be at least the one the plan's kernels were built by.
  if (major_minor(get(built_for, "cuda_runtime")) != major_minor(get(here, "cuda_runtime"))) {
    return invalid_argument("plan '{}' was built with CUDA runtime {} but this machine has {}; {}", plan_path,
                            get(built_for, "cuda_runtime"), get(here, "cuda_runtime"), rebuild);
  }
  return Status::OK();
}

Status build_gpu_plan_part(const ir::Graph& g, const SessionOptions& options, const std::vector<ShapeSet>& shape_sets,
                           GpuPlanPart* out) {
  try {
    runtime::GpuExecutorOptions eo;
    eo.device_id = options.device_id;
    eo.instance.layer.precision = options.precision;
    eo.instance.layer.verbose = options.verbose;
    eo.instance.use_cuda_graph = options.use_cuda_graph;
    eo.max_instances = std::max<size_t>(shape_sets.size(), 1);
    std::unique_ptr<runtime::GpuExecutor> ex;
    KILN_RETURN_IF_ERROR(runtime::GpuExecutor::create(g, eo, &ex));
    runtime::TacticCache cache(gpu_environment_fingerprint(ex->device()));
    const std::string cache_path = runtime::TacticCache::path_for(options.timing_cache_path);
    cache.load_or_warn(cache_path);
    ex->set_tactic_cache(&cache);
    out->environment = current_gpu_environment();
    out->shape_sets = nlohmann::json::array();
    for (const ShapeSet& shapes : shape_sets) {
      bool built = false;
      KILN_RETURN_IF_ERROR(ex->prepare(shapes, &built));
      if (!built) {
        return unsupported("the GPU plan depends on the values of small integer inputs (shape tensors), not only "
                           "on shapes: it is made when the model runs; load the .onnx instead of building a plan");
      }
      const runtime::GpuInstance& inst = *ex->last_instance();
      if (options.verbose) std::fprintf(stderr, "%s", inst.describe().c_str());
      out->shape_sets.push_back(describe_instance(inst, shapes, ex->constant_bytes()));
      out->layers = std::max(out->layers, static_cast<int>(inst.layer_count()));
    }
    out->tactics = cache.used();
    out->tactics_timed = cache.misses();
    out->tactics_from_cache = cache.hits();
    if (!cache_path.empty()) {
      const Status st = cache.save(cache_path);
      if (!st.ok()) std::fprintf(stderr, "kiln: warning: %s\n", st.message().c_str());
    }
    return Status::OK();
  } catch (const gpu::GpuError& e) {
    return {StatusCode::kInternal, e.what()};
  }
}

}  // namespace kiln
