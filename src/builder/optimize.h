// The optimizer step of a build: runs the pass pipeline of the requested level with the
// runtime's CPU evaluator (for constant folding) and static type inference plugged in.
#pragma once
#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "kiln/status.h"
#include "passes/pass_manager.h"

namespace kiln::builder {

struct OptimizeOptions {
  int level = 2;                  // 0, 1 or 2 (see passes/pipeline.h)
  std::string backend = "cpu";
  std::string precision = "fp32";
  bool prefer_channels_last = false;
  std::set<std::string> disabled_passes;
  bool dump = false;        // print per-pass time and node counts to stderr
  bool dump_graph = false;  // and the graph after every pass that changed it
  bool verify_each = false; // verify the graph after every pass (always on in debug builds)
};

// Adds what the environment asks for: KILN_DUMP_PASSES=1 (or =graph) and
// KILN_DISABLE_PASSES=name,name.
void apply_environment(OptimizeOptions* options);

// Checks level and pass names (an unknown --disable-pass name is an invalid argument).
Status validate(const OptimizeOptions& options);

// Optimizes `g` in place; `g` must have its types inferred already.
Status optimize_graph(ir::Graph& g, const OptimizeOptions& options,
                      std::vector<passes::PassStats>* stats = nullptr);

}  // namespace kiln::builder
