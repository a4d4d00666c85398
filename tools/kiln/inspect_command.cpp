// `kiln inspect MODEL`: what a model declares and how much work it is, without running it;
// with --optimized (or any optimizer flag), also what the graph optimizer makes of it.
#include <fmt/format.h>

#include <cstdio>
#include <memory>

#include "cli_util.h"
#include "commands.h"
#include "kiln/inspect.h"
#include "opt_flags.h"

namespace kiln::cli {
namespace {

struct InspectOptions {
  std::string model;
  std::vector<std::string> shapes;
  bool graph = false;
  bool optimized = false;
  OptimizerFlags optimizer;
};

void print_tensors(const char* title, const std::vector<TensorInfo>& declared,
                   const std::vector<std::vector<int64_t>>& used) {
  std::printf("%s:\n", title);
  for (size_t i = 0; i < declared.size(); ++i) {
    const std::string type = declared_type(declared[i]);
    const std::string concrete = used[i].empty() && !declared[i].has_shape ? "?" : dims_to_string(used[i]);
    std::printf("  %-24s %-28s -> %s\n", declared[i].name.c_str(), type.c_str(), concrete.c_str());
  }
}

void print_opsets(const std::map<std::string, int>& opsets) {
  std::string s;
  for (const auto& [domain, version] : opsets) {
    s += fmt::format("{}{} {}", s.empty() ? "" : ", ", domain.empty() ? "ai.onnx" : domain, version);
  }
  std::printf("opsets: %s\n", s.c_str());
}

std::string cost_row(const OpCostSummary& op) {
  std::string row = fmt::format("  {:<24} {:>6} {:>12.4g} {:>12.4g} {:>12.4g}", op.op_type, op.count, op.macs / 1e9,
                                op.total_flops() / 1e9, op.bytes / 1e6);
  if (op.unknown_cost) row += fmt::format("  ({} with unknown shapes)", op.unknown_cost);
  return row;
}

void print_summary(const std::string& path, const ModelSummary& s) {
  std::printf("model: %s\n", path.c_str());
  print_opsets(s.opsets);
  // Inputs show the declared type and the shape used below; outputs the inferred shape.
  print_tensors("inputs (declared -> used)", s.inputs, s.input_shapes);
  std::vector<std::vector<int64_t>> out_shapes;
  for (const TensorInfo& o : s.inferred_outputs) out_shapes.push_back(o.has_shape ? o.shape : std::vector<int64_t>{});
  print_tensors("outputs (declared -> inferred)", s.outputs, out_shapes);
  std::printf("nodes: %lld\n", static_cast<long long>(s.node_count));
  std::printf("parameters: %s (%s)\n", with_commas(s.param_count).c_str(), human_bytes(static_cast<double>(s.param_bytes)).c_str());
  std::printf("\n  %-24s %6s %12s %12s %12s\n", "op type", "count", "GMAC", "GFLOPs", "MB moved");
  for (const OpCostSummary& op : s.ops) std::printf("%s\n", cost_row(op).c_str());
  std::printf("%s\n", cost_row(s.total).c_str());
  std::printf("(GFLOPs = 2 x GMAC + other operations; MB moved = bytes read and written by each op)\n");
}

// Node counts per op type before and after optimization, side by side, then what each pass did.
void print_optimization(const ModelSummary& s) {
  std::map<std::string, std::pair<int64_t, int64_t>> counts;  // op -> (before, after)
  for (const OpCostSummary& op : s.ops) counts[op.op_type].first = op.count;
  for (const auto& [op, n] : s.optimized_op_counts) counts[op].second = n;
  std::printf("\noptimization: %.1f ms\n  %-32s %8s %8s\n", s.optimize_ms, "op type", "before", "after");
  for (const auto& [op, n] : counts) {
    std::printf("  %-32s %8lld %8lld%s\n", op.c_str(), static_cast<long long>(n.first),
                static_cast<long long>(n.second), n.first == n.second ? "" : " *");
  }
  std::printf("  %-32s %8lld %8lld\n", "total nodes", static_cast<long long>(s.node_count),
              static_cast<long long>(s.optimized_node_count));
  std::printf("\n  %-34s %9s  %s\n", "pass", "ms", "nodes before -> after");
  for (const PassReport& p : s.passes) {
    if (p.skipped) {
      std::printf("  %-34s %9s  (skipped)\n", p.name.c_str(), "");
    } else {
      std::printf("  %-34s %9.2f  %lld -> %lld%s\n", p.name.c_str(), p.ms, static_cast<long long>(p.nodes_before),
                  static_cast<long long>(p.nodes_after), p.changed ? "" : " (no change)");
    }
  }
}

int run_inspect(const InspectOptions& opt, bool optimize) {
  std::map<std::string, std::vector<int64_t>> shapes;
  Status st = parse_shape_options(opt.shapes, &shapes);
  if (!st.ok()) return report_error(st);
  SessionOptions session;
  st = apply_optimizer_flags(opt.optimizer, &session);
  if (!st.ok()) return report_error(st);
  kiln::InspectOptions io;
  io.optimize = optimize;
  io.optimization_level = session.optimization_level;
  io.disabled_passes = session.disabled_passes;
  io.prefer_channels_last = session.prefer_channels_last;
  io.dump_passes = session.dump_passes;
  io.dump_pass_graphs = session.dump_pass_graphs;
  ModelSummary summary;
  st = inspect_model(opt.model, shapes, io, &summary);
  if (!st.ok()) return report_error(st);
  if (opt.graph) {
    std::printf("%s", summary.graph_text.c_str());
  } else {
    print_summary(opt.model, summary);
    if (opt.optimized) print_optimization(summary);
  }
  return 0;
}

}  // namespace

void add_inspect_command(CLI::App& app) {
  auto opt = std::make_shared<InspectOptions>();
  CLI::App* cmd = app.add_subcommand("inspect", "Print a model's inputs, outputs, ops, parameters and FLOPs");
  cmd->add_option("model", opt->model, "ONNX model file")->required();
  cmd->add_option("--shape", opt->shapes,
                  "Concrete shape of an input, NAME=d1,d2,... (dynamic dims not given are taken as 1)");
  cmd->add_flag("--graph", opt->graph,
                "Print the graph in kiln's IR text form (after shape inference, or after optimization) instead");
  cmd->add_flag("--optimized", opt->optimized,
                "Also optimize the model as a session would and print node counts per op type before and after");
  add_optimizer_flags(cmd, &opt->optimizer);
  cmd->callback([opt, cmd] {
    // Any optimizer flag asks for the optimizer; plain `kiln inspect` shows the model as imported.
    const bool optimize = opt->optimized || opt->optimizer.prefer_channels_last || cmd->count("--opt-level") > 0 ||
                          cmd->count("--dump-passes") > 0 || cmd->count("--disable-pass") > 0;
    exit_code() = run_inspect(*opt, optimize);
  });
}

}  // namespace kiln::cli
