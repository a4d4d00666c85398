#include "builder/optimize.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include "core/error.h"
#include "passes/pipeline.h"
#include "runtime/node_eval.h"
#include "runtime/shape_inference.h"

namespace kiln::builder {

void apply_environment(OptimizeOptions* options) {
  if (const char* dump = std::getenv("KILN_DUMP_PASSES"); dump && *dump && std::string(dump) != "0") {
    options->dump = true;
    options->dump_graph = options->dump_graph || std::string(dump) == "graph";
  }
  if (const char* disabled = std::getenv("KILN_DISABLE_PASSES"); disabled && *disabled) {
    std::stringstream ss(disabled);
    for (std::string name; std::getline(ss, name, ',');) {
      if (!name.empty()) options->disabled_passes.insert(name);
    }
  }
}

Status validate(const OptimizeOptions& options) {
  if (options.level < 0 || options.level > passes::kMaxOptLevel) {
    return invalid_argument("optimization level {} does not exist (0, 1 or 2)", options.level);
  }
  const std::vector<std::string> known = passes::known_pass_names();
  for (const std::string& name : options.disabled_passes) {
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      std::string list;
      for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
      return invalid_argument("no pass is named '{}' (passes: {})", name, list);
    }
  }
  return Status::OK();
}

Status optimize_graph(ir::Graph& g, const OptimizeOptions& options, std::vector<passes::PassStats>* stats) {
  KILN_RETURN_IF_ERROR(validate(options));
  passes::PassContext ctx;
  ctx.backend = options.backend;
  ctx.precision = options.precision;
  // Tensor cores read channels-last (NHWC) convolutions natively; cuDNN transposes NCHW
  // half-precision tensors around each convolution otherwise. Strict fp32 runs on CUDA cores,
  // where cuDNN's NCHW kernels are as fast, so it keeps the model's layout.
  ctx.prefer_channels_last =
      options.prefer_channels_last || (options.backend == "cuda" && options.precision != "fp32");
  ctx.evaluate = [](const ir::Node& node, const std::vector<const Tensor*>& inputs, std::vector<Tensor>* outputs) {
    auto no_subgraphs = [](const ir::Graph&, std::vector<Tensor>*) {
      return Status(StatusCode::kUnsupported, "subgraphs are not folded");
    };
    return runtime::eval_node(node, inputs, no_subgraphs, outputs);
  };
  ctx.infer_types = [](ir::Graph& graph) { return runtime::infer_graph_types(graph); };
  passes::PassManagerOptions pm_options;
  pm_options.disabled = options.disabled_passes;
  pm_options.dump = options.dump ? &std::cerr : nullptr;
  pm_options.dump_graph = options.dump_graph;
  pm_options.verify_each = pm_options.verify_each || options.verify_each;
  return passes::build_pipeline(options.level).run(g, ctx, pm_options, stats);
}

}  // namespace kiln::builder
