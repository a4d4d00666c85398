// The graph-optimizer flags `kiln run`, `kiln check` and `kiln inspect` share:
//   -O,--opt-level N          0, 1 or 2 (default 2)
//   --dump-passes[=graph]     per-pass time and node counts on stderr (=graph: also the graph
//                             after every pass that changed it); env KILN_DUMP_PASSES=1|graph
//   --disable-pass NAME       skip a pass (repeatable); env KILN_DISABLE_PASSES=a,b
//   --prefer-channels-last    lay convolutions out NHWC as for a backend that wants it
#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "kiln/session.h"
#include "kiln/status.h"

namespace kiln::cli {

struct OptimizerFlags {
  int level = 2;
  std::string dump;  // "" (off), "1" or "graph"
  std::vector<std::string> disabled;
  bool prefer_channels_last = false;

  bool dump_passes() const { return !dump.empty() && dump != "0"; }
  bool dump_graphs() const { return dump == "graph"; }
};

void add_optimizer_flags(CLI::App* cmd, OptimizerFlags* flags);

// Checks the pass names (an unknown one is an error listing the known ones) and sets the
// optimizer fields of `options`.
Status apply_optimizer_flags(const OptimizerFlags& flags, SessionOptions* options);

}  // namespace kiln::cli
