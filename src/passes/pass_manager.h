// Runs an ordered list of passes over a graph, with per-entry conditions, timing, a dump for
// --dump-passes, and (in tests and debug builds) a verification of the graph after each pass.
#pragma once
#include <functional>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "passes/pass.h"

namespace kiln::passes {

// What one pass did in one run.
struct PassStats {
  std::string name;
  double ms = 0;
  int64_t nodes_before = 0;
  int64_t nodes_after = 0;
  bool changed = false;
  bool skipped = false;  // disabled by the user or its condition did not hold
};

struct PassManagerOptions {
#ifdef NDEBUG
  bool verify_each = false;
#else
  bool verify_each = true;
#endif
  std::set<std::string> disabled;  // pass names to skip
  std::ostream* dump = nullptr;    // where to print one line per pass (nullptr: nowhere)
  bool dump_graph = false;         // also print the graph after every pass that changed it
};

// A condition on the build (backend, precision) under which a pipeline entry runs.
using PassCondition = std::function<bool(const PassContext&)>;

class PassManager {
 public:
  // Appends a pass; `condition` empty means always.
  void add(std::unique_ptr<Pass> pass, PassCondition condition = {});
  std::vector<std::string> pass_names() const;

  // Runs every entry in order. A pass that throws, or leaves a graph whose types cannot be
  // re-inferred or that fails verification, is an internal error naming the pass.
  Status run(ir::Graph& g, const PassContext& ctx, const PassManagerOptions& options,
             std::vector<PassStats>* stats = nullptr) const;

 private:
  struct Entry {
    std::unique_ptr<Pass> pass;
    PassCondition condition;
  };
  std::vector<Entry> entries_;
};

// Nodes of `g` (top level; subgraph bodies are not counted).
int64_t count_nodes(const ir::Graph& g);

}  // namespace kiln::passes
