// Static summary of an ONNX model without running it: inputs/outputs, opsets, op histogram,
// parameter count, and the work (MACs, FLOPs, bytes moved) each op type does for given
// concrete input shapes. This is what `kiln inspect` prints.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kiln/session.h"
#include "kiln/status.h"

namespace kiln {

// Totals for one op type (or for the whole model).
struct OpCostSummary {
  std::string op_type;  // "Conv", or "com.microsoft.Attention" for other domains
  int64_t count = 0;    // nodes of this type (subgraph nodes included)
  double macs = 0;      // multiply-accumulates
  double flops = 0;     // arithmetic besides the MACs; reported GFLOPs are 2*macs + flops
  double bytes = 0;     // bytes read and written, weights included
  // Nodes whose shapes stayed unknown (data-dependent), so their cost is not counted.
  int64_t unknown_cost = 0;

  double total_flops() const { return 2 * macs + flops; }
};

// What one optimization pass did (see `kiln inspect --dump-passes`).
struct PassReport {
  std::string name;
  double ms = 0;
  int64_t nodes_before = 0;
  int64_t nodes_after = 0;
  bool changed = false;
  bool skipped = false;  // disabled, or not for this backend
};

struct ModelSummary {
  // As the model declares them: dynamic dims are -1 with their names in `dim_names`.
  std::vector<TensorInfo> inputs;
  std::vector<TensorInfo> outputs;
  // The concrete input shapes used for inference and cost, one per input.
  std::vector<std::vector<int64_t>> input_shapes;
  // Output types inferred from `input_shapes` (dims still -1 where they depend on data).
  std::vector<TensorInfo> inferred_outputs;
  std::map<std::string, int> opsets;  // domain ("" = ai.onnx) -> version
  int64_t node_count = 0;
  int64_t param_count = 0;  // elements of initializers and Constant nodes
  int64_t param_bytes = 0;
  std::vector<OpCostSummary> ops;  // one per op type, by descending FLOPs, then name
  OpCostSummary total;             // op_type "total"
  // The graph in kiln's IR text form, after shape inference with `input_shapes` (after
  // optimization when InspectOptions::optimize).
  std::string graph_text;

  // Filled when InspectOptions::optimize: the optimizer ran on the model as a session would
  // load it (declared shapes), and these describe its result.
  bool optimized = false;
  std::vector<PassReport> passes;              // one per pipeline entry, in order
  double optimize_ms = 0;                      // the whole pipeline
  int64_t optimized_node_count = 0;
  std::map<std::string, int64_t> optimized_op_counts;  // op type (as in `ops`) -> nodes
};

// Whether and how inspect_model runs the graph optimizer (see SessionOptions).
struct InspectOptions {
  bool optimize = false;
  int optimization_level = 2;
  std::vector<std::string> disabled_passes;
  bool prefer_channels_last = false;
  bool dump_passes = false;       // per-pass lines on stderr (also KILN_DUMP_PASSES=1)
  bool dump_pass_graphs = false;  // and the graph after each pass that changed it
};

// Imports `path`, gives each input the shape in `shapes` (by input name; a dynamic dim not
// given there is taken as 1), infers every tensor's type, and sums each op's cost.
// Fails (naming the node) when the model does not import or shapes are inconsistent, and
// with kInvalidArgument when `shapes` names an unknown input or contradicts a fixed dim.
Status inspect_model(const std::string& path, const std::map<std::string, std::vector<int64_t>>& shapes,
                     ModelSummary* summary);
// The same, optimizing as `options` say.
Status inspect_model(const std::string& path, const std::map<std::string, std::vector<int64_t>>& shapes,
                     const InspectOptions& options, ModelSummary* summary);

// Names of the graph optimizer's passes (for --disable-pass), sorted.
std::vector<std::string> optimization_pass_names();

// Op types kiln can import and run, as "Conv" or "domain.Op", sorted.
std::vector<std::string> supported_op_types();

}  // namespace kiln
