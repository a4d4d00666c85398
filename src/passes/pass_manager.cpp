#include "passes/pass_manager.h"

#include <chrono>
#include <cstdio>

#include "core/error.h"
#include "ir/verifier.h"

namespace kiln::passes {

void PassManager::add(std::unique_ptr<Pass> pass, PassCondition condition) {
  entries_.push_back({std::move(pass), std::move(condition)});
}

std::vector<std::string> PassManager::pass_names() const {
  std::vector<std::string> names;
  for (const Entry& e : entries_) names.push_back(e.pass->name());
  return names;
}

int64_t count_nodes(const ir::Graph& g) {
  // Top-level nodes only: a fused node's body is one kernel, and counting its ops would make a
  // fusion look like growth.
  return static_cast<int64_t>(g.nodes().size());
}

namespace {

void print_stats_line(std::ostream& os, const PassStats& s) {
  char line[160];
  if (s.skipped) {
    std::snprintf(line, sizeof line, "  %-34s %9s  (skipped)\n", s.name.c_str(), "");
  } else {
    std::snprintf(line, sizeof line, "  %-34s %7.2f ms  %6lld -> %-6lld%s\n", s.name.c_str(), s.ms,
                  static_cast<long long>(s.nodes_before), static_cast<long long>(s.nodes_after),
                  s.changed ? "" : "  (no change)");
  }
  os << line;
}

}  // namespace

Status PassManager::run(ir::Graph& g, const PassContext& ctx, const PassManagerOptions& options,
                        std::vector<PassStats>* stats) const {
  if (options.dump) *options.dump << "passes on graph '" << g.name << "':\n";
  for (const Entry& e : entries_) {
    PassStats s;
    s.name = e.pass->name();
    s.nodes_before = s.nodes_after = count_nodes(g);
    s.skipped = options.disabled.count(s.name) != 0 || (e.condition && !e.condition(ctx));
    if (!s.skipped) {
      const auto start = std::chrono::steady_clock::now();
      try {
        s.changed = e.pass->apply(g, ctx);
        if (s.changed && ctx.infer_types) {
          KILN_RETURN_IF_ERROR(ctx.infer_types(g).with_context("types after pass " + s.name));
        }
      } catch (const std::exception& ex) {
        return {StatusCode::kInternal, "pass " + s.name + " failed: " + ex.what()};
      }
      s.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      s.nodes_after = count_nodes(g);
      if (options.verify_each) {
        Status st = ir::verify_graph(g);
        if (!st.ok()) return {StatusCode::kInternal, "pass " + s.name + " left a broken graph: " + st.message()};
      }
    }
    if (options.dump) {
      print_stats_line(*options.dump, s);
      if (options.dump_graph && s.changed) *options.dump << ir::print_graph(g);
    }
    if (stats) stats->push_back(std::move(s));
  }
  return Status::OK();
}

}  // namespace kiln::passes
