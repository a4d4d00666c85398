#include "api/inspect_optimize.h"

#include <chrono>

#include "builder/optimize.h"
#include "core/error.h"
#include "onnx/importer.h"
#include "passes/pipeline.h"
#include "runtime/shape_inference.h"

namespace kiln {
namespace {

void count_ops(const ir::Graph& g, ModelSummary* s) {
  for (const auto& node : g.nodes()) {
    ++s->optimized_op_counts[node->domain.empty() ? node->op_type : node->domain + "." + node->op_type];
    ++s->optimized_node_count;
    for (const auto& [name, attr] : node->attrs) {
      if (attr.g) count_ops(*attr.g, s);
    }
  }
}

}  // namespace

Status inspect_optimized(const std::string& path, const InspectOptions& options, ModelSummary* s) {
  std::unique_ptr<ir::Graph> g;
  KILN_RETURN_IF_ERROR(onnx_io::import_model_file(path, &g));
  KILN_RETURN_IF_ERROR(runtime::infer_graph_types(*g));
  builder::OptimizeOptions opt;
  opt.level = options.optimization_level;
  opt.backend = "cpu";
  opt.prefer_channels_last = options.prefer_channels_last;
  opt.disabled_passes.insert(options.disabled_passes.begin(), options.disabled_passes.end());
  opt.dump = options.dump_passes || options.dump_pass_graphs;
  opt.dump_graph = options.dump_pass_graphs;
  builder::apply_environment(&opt);
  std::vector<passes::PassStats> stats;
  const auto start = std::chrono::steady_clock::now();
  KILN_RETURN_IF_ERROR(builder::optimize_graph(*g, opt, &stats));
  s->optimize_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  for (const passes::PassStats& p : stats) {
    s->passes.push_back({p.name, p.ms, p.nodes_before, p.nodes_after, p.changed, p.skipped});
  }
  count_ops(*g, s);
  s->graph_text = ir::print_graph(*g);
  s->optimized = true;
  return Status::OK();
}

std::vector<std::string> optimization_pass_names() { return passes::known_pass_names(); }

}  // namespace kiln
