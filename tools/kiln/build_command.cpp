// `kiln build MODEL -o PLAN`: optimizes a model once for one backend and precision, times the
// GPU tactics of every layer (or takes them from the timing cache), and writes a plan file
// that `kiln run`, `kiln bench` and Session::load take in place of the model.
#include <fmt/format.h>

#include <cstdio>
#include <memory>

#include "cli_util.h"
#include "commands.h"
#include "kiln/build.h"
#include "opt_flags.h"

namespace kiln::cli {
namespace {

struct BuildCommandOptions {
  std::string model;
  std::string plan;
  std::string backend = "auto";
  std::string precision = "fp32";
  std::vector<std::string> profiles;  // NAME:MIN,OPT,MAX
  std::string timing_cache;
  bool verbose = false;
  OptimizerFlags optimizer;
};

Status build(const BuildCommandOptions& opt) {
  BuildOptions options;
  options.session.backend = opt.backend;
  options.session.precision = opt.precision;
  options.session.timing_cache_path = opt.timing_cache;
  options.session.verbose = opt.verbose;
  KILN_RETURN_IF_ERROR(apply_optimizer_flags(opt.optimizer, &options.session));
  options.profile_specs = opt.profiles;
  BuildReport report;
  KILN_RETURN_IF_ERROR(build_plan(opt.model, opt.plan, options, &report));
  std::printf("%s: %s in %.2f s, %d shape set%s, %d layers, tactics %d timed / %d cached\n", opt.plan.c_str(),
              human_bytes(static_cast<double>(report.plan_bytes)).c_str(), report.seconds, report.shape_sets,
              report.shape_sets == 1 ? "" : "s", report.layers, report.tactics_timed, report.tactics_from_cache);
  return Status::OK();
}

}  // namespace

void add_build_command(CLI::App& app) {
  auto opt = std::make_shared<BuildCommandOptions>();
  CLI::App* cmd = app.add_subcommand("build", "Optimize a model for one backend and precision and write a plan file");
  cmd->add_option("model", opt->model, "ONNX model file")->required();
  cmd->add_option("-o,--output", opt->plan, "Plan file to write (e.g. model.plan)")->required();
  cmd->add_option("--backend", opt->backend, "Backend to build for: auto, cuda, or cpu (a graph-only plan)")
      ->check(CLI::IsMember({"auto", "cuda", "cpu"}));
  cmd->add_option("--precision", opt->precision, "GPU precision: fp32 (strict), tf32, fp16, bf16")
      ->check(CLI::IsMember({"fp32", "tf32", "fp16", "bf16"}));
  cmd->add_option("--profile", opt->profiles,
                  "Shapes of a dynamic input to build for, NAME:MIN,OPT,MAX with full shapes (1x3x224x224) or, for "
                  "one dynamic dimension, its values (x:1,8,32); repeat per input");
  cmd->add_option("--timing-cache", opt->timing_cache,
                  "Tactic timing cache file, or 'none' (default: $KILN_TIMING_CACHE, else "
                  "~/.cache/kiln/timing_cache.json)");
  cmd->add_flag("--verbose", opt->verbose, "Print every layer's chosen tactic and time");
  add_optimizer_flags(cmd, &opt->optimizer);
  cmd->callback([opt] {
    const Status st = build(*opt);
    exit_code() = st.ok() ? 0 : report_error(st);
  });
}

void add_plan_info_command(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "plan-info", "Describe a plan file: build options, environment, layers with tactics, memory plan");
  cmd->add_option("plan", *path, "Plan file written by kiln build")->required();
  cmd->callback([path] {
    std::string text;
    const Status st = describe_plan(*path, &text);
    if (st.ok()) std::fputs(text.c_str(), stdout);
    exit_code() = st.ok() ? 0 : report_error(st);
  });
}

}  // namespace kiln::cli
