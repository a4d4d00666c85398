// build_plan (kiln/build.h): optimize a model once for one backend and precision, build the
// GPU layers for every profile shape set, and write the plan file (runtime/plan_file.h).
#include <chrono>
#include <ctime>
#include <filesystem>
#include <set>

#include "api/gpu_plan.h"
#include "api/tensor_info.h"
#include "builder/cpu_plan_part.h"
#include "builder/input_profile.h"
#include "builder/prepare_graph.h"
#include "core/error.h"
#include "kiln/build.h"
#include "onnx/exporter.h"
#include "runtime/plan_file.h"

namespace kiln {
namespace {

using json = nlohmann::json;

std::string utc_now_iso() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// The profiles of `options` (given parsed, or as texts), checked against the graph's inputs.
Status collect_profiles(const ir::Graph& g, const BuildOptions& options, std::vector<InputProfile>* out) {
  std::map<std::string, TensorInfo> inputs;
  for (const ir::Value* v : g.inputs) inputs[v->name] = tensor_info_of(*v);
  auto find = [&](const std::string& name) -> const TensorInfo* {
    auto it = inputs.find(name);
    return it == inputs.end() ? nullptr : &it->second;
  };
  *out = options.profiles;
  for (const std::string& spec : options.profile_specs) {
    InputProfile p;
    KILN_RETURN_IF_ERROR(parse_input_profile(spec, nullptr, &p));  // for the name
    const TensorInfo* input = find(p.input);
    if (!input) return invalid_argument("--profile '{}': the model has no input '{}'", spec, p.input);
    KILN_RETURN_IF_ERROR(parse_input_profile(spec, input, &p));
    out->push_back(std::move(p));
  }
  std::set<std::string> seen;
  for (const InputProfile& p : *out) {
    const TensorInfo* input = find(p.input);
    if (!input) return invalid_argument("a profile names '{}', which is not an input of the model", p.input);
    if (!seen.insert(p.input).second) return invalid_argument("input '{}' has two profiles", p.input);
    KILN_RETURN_IF_ERROR(check_input_profile(p, *input).with_context("profile of '" + p.input + "'"));
  }
  return Status::OK();
}

// Up to three shape sets: every input at its profile's min, then opt, then max (inputs without a
// profile keep their static shape). An input with dynamic dims and no profile: an error when
// `required` (the GPU builds for concrete shapes), else no shape sets at all.
Status make_shape_sets(const ir::Graph& g, const std::vector<InputProfile>& profiles, bool required,
                       std::vector<ShapeSet>* sets) {
  sets->clear();
  for (int point = 0; point < 3; ++point) {
    ShapeSet set;
    for (const ir::Value* v : g.inputs) {
      auto p = std::find_if(profiles.begin(), profiles.end(), [&](const InputProfile& p) { return p.input == v->name; });
      if (p != profiles.end()) {
        set.push_back(point == 0 ? p->min : point == 1 ? p->opt : p->max);
      } else if (v->type.is_concrete()) {
        set.push_back(v->type.concrete());
      } else if (required) {
        return invalid_argument("input '{}' has dynamic dimensions ({}): give the shapes to build for with --profile "
                                "{}:MIN,OPT,MAX",
                                v->name, v->type.to_string(), v->name);
      } else {
        sets->clear();
        return Status::OK();
      }
    }
    if (std::find(sets->begin(), sets->end(), set) == sets->end()) sets->push_back(std::move(set));
  }
  return Status::OK();
}

json profiles_json(const std::vector<InputProfile>& profiles) {
  json out = json::array();
  for (const InputProfile& p : profiles) out.push_back({{"input", p.input}, {"min", p.min}, {"opt", p.opt}, {"max", p.max}});
  return out;
}

json base_header(const std::string& model_path, const BuildOptions& options, const std::string& backend,
                 const ir::Graph& g, const std::vector<InputProfile>& profiles) {
  std::error_code ec;
  const auto model_bytes = std::filesystem::file_size(model_path, ec);
  json inputs = json::array();
  for (const ir::Value* v : g.inputs) inputs.push_back(v->name);
  return {{"format_version", runtime::kPlanFormatVersion},
          {"kiln_version", KILN_VERSION},
          {"created", utc_now_iso()},
          {"source_model", {{"path", model_path}, {"bytes", ec ? 0 : model_bytes}}},
          {"backend", backend},
          {"precision", builder::effective_precision(options.session, backend)},
          {"optimization_level", options.session.optimization_level},
          {"prefer_channels_last", options.session.prefer_channels_last},
          {"disabled_passes", options.session.disabled_passes},
          {"inputs", inputs},
          {"profiles", profiles_json(profiles)}};
}

}  // namespace

Status build_plan(const std::string& model_path, const std::string& plan_path, const BuildOptions& options,
                  BuildReport* report) {
  const auto start = std::chrono::steady_clock::now();
  *report = BuildReport{};
  std::string backend;
  KILN_RETURN_IF_ERROR(builder::resolve_backend(options.session.backend, &backend));
  std::unique_ptr<ir::Graph> g;
  KILN_RETURN_IF_ERROR(builder::prepare_graph(model_path, options.session, backend, &g));
  std::vector<InputProfile> profiles;
  KILN_RETURN_IF_ERROR(collect_profiles(*g, options, &profiles));
  std::vector<ShapeSet> sets;
  KILN_RETURN_IF_ERROR(make_shape_sets(*g, profiles, backend == "cuda", &sets));

  runtime::PlanFile plan;
  plan.header = base_header(model_path, options, backend, *g, profiles);
  report->shape_sets = static_cast<int>(sets.size());
  if (backend == "cuda") {
#ifdef KILN_HAVE_CUDA
    GpuPlanPart part;
    KILN_RETURN_IF_ERROR(build_gpu_plan_part(*g, options.session, sets, &part));
    plan.header["environment"] = part.environment;
    plan.header["tactics"] = part.tactics;
    plan.header["shape_sets"] = part.shape_sets;
    plan.header["layers"] = part.layers;
    plan.header["tactics_timed"] = part.tactics_timed;
    plan.header["tactics_from_cache"] = part.tactics_from_cache;
    report->layers = part.layers;
    report->tactics_timed = part.tactics_timed;
    report->tactics_from_cache = part.tactics_from_cache;
#endif
  }
  KILN_RETURN_IF_ERROR(onnx_io::export_model_bytes(*g, &plan.graph_bytes).with_context(model_path));
  if (backend == "cpu") {  // after the export: this re-infers types for each shape set
    KILN_RETURN_IF_ERROR(builder::cpu_shape_sets(*g, sets, &plan.header["shape_sets"]));
    report->layers = static_cast<int>(g->nodes().size());
    plan.header["layers"] = report->layers;
  }
  KILN_RETURN_IF_ERROR(runtime::write_plan_file(plan_path, plan, &report->plan_bytes));
  report->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return Status::OK();
}

}  // namespace kiln
