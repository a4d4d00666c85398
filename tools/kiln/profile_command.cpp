// `kiln profile MODEL_OR_PLAN`: time per layer and per op type (GPU sessions, device events),
// sorted, with each one's share of the total.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "bench_report.h"
#include "cli_util.h"
#include "commands.h"
#include "kiln/kiln.h"
#include "opt_flags.h"
#include "plan_peek.h"
#include "random_inputs.h"

namespace kiln::cli {
namespace {

struct ProfileOptions {
  std::string model;
  std::string backend = "auto";
  std::string precision = "fp32";
  std::vector<std::string> shapes;
  int64_t batch = 1;
  int iterations = 50;
  int top = 0;  // 0: every layer
  std::string json;
  OptimizerFlags optimizer;
  bool precision_given = false;
};

struct OpTime {
  std::string op;
  int layers = 0;
  double ms = 0;
};

// Per-op-type totals, slowest first.
std::vector<OpTime> by_op_type(const std::vector<LayerTime>& layers) {
  std::vector<OpTime> ops;
  for (const LayerTime& l : layers) {
    auto it = std::find_if(ops.begin(), ops.end(), [&](const OpTime& o) { return o.op == l.op_type; });
    if (it == ops.end()) it = ops.insert(ops.end(), OpTime{l.op_type, 0, 0});
    ++it->layers;
    it->ms += l.ms;
  }
  std::stable_sort(ops.begin(), ops.end(), [](const OpTime& a, const OpTime& b) { return a.ms > b.ms; });
  return ops;
}

double percent(double part, double total) { return total > 0 ? 100.0 * part / total : 0; }

void print_profile(const std::vector<LayerTime>& sorted, const std::vector<OpTime>& ops, double total, int top) {
  const size_t shown = top > 0 ? std::min(sorted.size(), static_cast<size_t>(top)) : sorted.size();
  std::printf("%-4s %-40s %-22s %-32s %9s %7s %7s\n", "#", "layer", "op", "tactic", "ms", "%", "cum %");
  double cumulative = 0;
  for (size_t i = 0; i < shown; ++i) {
    const LayerTime& l = sorted[i];
    cumulative += l.ms;
    std::printf("%-4zu %-40s %-22s %-32s %9.4f %7.2f %7.2f\n", i + 1, l.name.c_str(), l.op_type.c_str(),
                l.tactic.c_str(), l.ms, percent(l.ms, total), percent(cumulative, total));
  }
  if (shown < sorted.size()) std::printf("... %zu more layers (--top 0 shows all)\n", sorted.size() - shown);
  std::printf("\n%-22s %7s %9s %7s\n", "op type", "layers", "ms", "%");
  for (const OpTime& o : ops) std::printf("%-22s %7d %9.4f %7.2f\n", o.op.c_str(), o.layers, o.ms, percent(o.ms, total));
  std::printf("\ntotal: %.4f ms per run over %zu layers\n", total, sorted.size());
}

nlohmann::json profile_json(const ProfileOptions& opt, const Session& s, const std::vector<LayerTime>& sorted,
                            const std::vector<OpTime>& ops, double total) {
  nlohmann::json layers = nlohmann::json::array(), op_json = nlohmann::json::array();
  for (const LayerTime& l : sorted) {
    layers.push_back({{"name", l.name}, {"op", l.op_type}, {"tactic", l.tactic}, {"ms", l.ms}, {"percent", percent(l.ms, total)}});
  }
  for (const OpTime& o : ops) {
    op_json.push_back({{"op", o.op}, {"layers", o.layers}, {"ms", o.ms}, {"percent", percent(o.ms, total)}});
  }
  return {{"model", opt.model},   {"backend", s.backend()}, {"precision", opt.precision}, {"batch", opt.batch},
          {"iterations", opt.iterations}, {"total_ms", total}, {"layers", layers}, {"ops", op_json}};
}

Status run_profile(ProfileOptions opt) {
  if (opt.iterations < 1 || opt.batch < 1 || opt.top < 0) {
    return {StatusCode::kInvalidArgument, "--iterations and --batch must be at least 1, --top at least 0"};
  }
  std::vector<std::string> precisions{opt.precision};
  KILN_RETURN_IF_ERROR(plan_precisions(opt.model, opt.precision_given, &precisions));
  opt.precision = precisions[0];
  SessionOptions so;
  so.backend = opt.backend;
  so.precision = opt.precision;
  KILN_RETURN_IF_ERROR(apply_optimizer_flags(opt.optimizer, &so));
  std::unique_ptr<Session> session;
  KILN_RETURN_IF_ERROR(Session::load(opt.model, so, &session));
  RandomInputOptions random;
  random.shapes = opt.shapes;
  random.batch = opt.batch;
  std::map<std::string, Tensor> inputs;
  KILN_RETURN_IF_ERROR(fill_random_inputs(*session, random, &inputs));
  std::vector<LayerTime> layers;
  KILN_RETURN_IF_ERROR(session->profile(inputs, opt.iterations, &layers));

  std::vector<LayerTime> sorted = layers;
  std::stable_sort(sorted.begin(), sorted.end(), [](const LayerTime& a, const LayerTime& b) { return a.ms > b.ms; });
  double total = 0;
  for (const LayerTime& l : sorted) total += l.ms;
  const std::vector<OpTime> ops = by_op_type(sorted);
  std::printf("kiln profile %s: backend %s, precision %s, batch %lld, mean of %d runs\n\n", opt.model.c_str(),
              session->backend().c_str(), opt.precision.c_str(), static_cast<long long>(opt.batch), opt.iterations);
  print_profile(sorted, ops, total, opt.top);
  if (opt.json.empty()) return Status::OK();
  return write_text_file(opt.json, profile_json(opt, *session, sorted, ops, total).dump(1) + "\n");
}

}  // namespace

void add_profile_command(CLI::App& app) {
  auto opt = std::make_shared<ProfileOptions>();
  CLI::App* cmd = app.add_subcommand("profile", "Time every layer of a model or plan on the GPU, sorted, and per op type");
  cmd->add_option("model", opt->model, "ONNX model or .plan file")->required();
  cmd->add_option("--backend", opt->backend, "Backend to run on (auto, cuda; the CPU backend cannot profile)");
  CLI::Option* precision = cmd->add_option("--precision", opt->precision, "GPU build precision: fp32, tf32, fp16, bf16")
                               ->check(CLI::IsMember({"fp32", "tf32", "fp16", "bf16"}));
  cmd->add_option("--shape", opt->shapes, "Shape of an input with dynamic dims, NAME=d1,d2,... (dim 0 becomes the batch)");
  cmd->add_option("--batch", opt->batch, "Batch size (replaces dim 0 of dynamic-batch inputs; default 1)");
  cmd->add_option("--iterations", opt->iterations, "Runs to average each layer's time over (default 50)");
  cmd->add_option("--top", opt->top, "Show only the N slowest layers (0: all)");
  cmd->add_option("--json", opt->json, "Write the profile as JSON to this file");
  add_optimizer_flags(cmd, &opt->optimizer);
  cmd->callback([opt, precision] {
    opt->precision_given = precision->count() > 0;
    const Status st = run_profile(*opt);
    exit_code() = st.ok() ? 0 : report_error(st);
  });
}

}  // namespace kiln::cli
