#include "opt_flags.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "kiln/inspect.h"

namespace kiln::cli {

void add_optimizer_flags(CLI::App* cmd, OptimizerFlags* flags) {
  cmd->add_option("-O,--opt-level", flags->level,
                  "Graph optimization level: 0 as imported, 1 clean-ups and folding, 2 also fusions (default)")
      ->check(CLI::Range(0, 2));
  // A flag that may take a value: --dump-passes alone is "1", --dump-passes=graph is "graph".
  cmd->add_flag("--dump-passes{1}", flags->dump,
                "Print each optimization pass's time and node counts to stderr (=graph: and the graph after "
                "each pass that changed it)")
      ->check(CLI::IsMember({"0", "1", "graph"}));
  cmd->add_option("--disable-pass", flags->disabled, "Skip an optimization pass by name (repeatable)");
  cmd->add_flag("--prefer-channels-last", flags->prefer_channels_last,
                "Optimize as for a backend that prefers channels-last (NHWC) convolutions");
}

Status apply_optimizer_flags(const OptimizerFlags& flags, SessionOptions* options) {
  const std::vector<std::string> known = optimization_pass_names();
  for (const std::string& name : flags.disabled) {
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      return {StatusCode::kInvalidArgument,
              fmt::format("--disable-pass: no pass is named '{}' (passes: {})", name,
                          known.empty() ? std::string("none") : fmt::format("{}", fmt::join(known, ", ")))};
    }
  }
  options->optimization_level = flags.level;
  options->disabled_passes = flags.disabled;
  options->dump_passes = flags.dump_passes();
  options->dump_pass_graphs = flags.dump_graphs();
  options->prefer_channels_last = flags.prefer_channels_last;
  return Status::OK();
}

}  // namespace kiln::cli
