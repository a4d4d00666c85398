// `kiln run MODEL --input NAME=FILE ...`: runs a model once (or N times, timed), prints a
// summary of each output and optionally writes the outputs as .npy files.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "bench_stats.h"
#include "cli_util.h"
#include "commands.h"
#include "kiln/kiln.h"
#include "kiln/tensor_io.h"
#include "opt_flags.h"
#include "random_inputs.h"
#include "tensor_summary.h"

namespace fs = std::filesystem;

namespace kiln::cli {
namespace {

struct RunOptions {
  std::string model;
  std::vector<std::string> inputs;  // NAME=FILE
  std::vector<std::string> shapes;  // NAME=d1,d2 for --random-inputs
  std::string output_dir;
  std::string backend = "auto";
  std::string precision = "fp32";
  bool no_cuda_graph = false;
  int warmup = 0;
  int runs = 1;
  bool random_inputs = false;
  uint32_t seed = 0;
  OptimizerFlags optimizer;
};

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Reads the --input NAME=FILE options into `inputs`.
Status read_inputs(const Session& s, const std::vector<std::string>& specs, std::map<std::string, Tensor>* inputs) {
  for (const std::string& spec : specs) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
      return {StatusCode::kInvalidArgument, fmt::format("--input '{}' is not of the form NAME=FILE", spec)};
    }
    const std::string name = spec.substr(0, eq);
    if (!find_info(s.inputs(), name)) {
      return {StatusCode::kInvalidArgument,
              fmt::format("--input names '{}', but the model's inputs are {}", name, quoted_names(s.inputs()))};
    }
    if (inputs->count(name)) {
      return {StatusCode::kInvalidArgument, fmt::format("--input '{}' is given twice", name)};
    }
    Tensor t;
    KILN_RETURN_IF_ERROR(read_tensor_file(spec.substr(eq + 1), &t).with_context("--input " + name));
    (*inputs)[name] = std::move(t);
  }
  return Status::OK();
}

// Fills every input not given on the command line with random data, or fails naming them.
Status complete_inputs(const Session& s, const RunOptions& opt, std::map<std::string, Tensor>* inputs) {
  for (const TensorInfo& in : s.inputs()) {
    if (inputs->count(in.name) || opt.random_inputs) continue;
    std::string all;
    for (const TensorInfo& i : s.inputs()) all += fmt::format("{}{} {}", all.empty() ? "" : ", ", i.name, declared_type(i));
    return {StatusCode::kInvalidArgument,
            fmt::format("input '{}' is not given (use --input NAME=FILE or --random-inputs); the model's inputs are: {}",
                        in.name, all)};
  }
  RandomInputOptions random;
  random.shapes = opt.shapes;
  random.seed = opt.seed;
  return fill_random_inputs(s, random, inputs);
}

// Output names become file names: anything outside [A-Za-z0-9_.-] turns into '_'.
std::string file_name_for(const std::string& output_name) {
  std::string s = output_name;
  for (char& c : s) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
                    c == '.' || c == '-';
    if (!ok) c = '_';
  }
  return s + ".npy";
}

Status write_outputs(const Session& s, const std::vector<Tensor>& outputs, const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return {StatusCode::kInvalidArgument, fmt::format("cannot create output folder '{}': {}", dir, ec.message())};
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string path = (fs::path(dir) / file_name_for(s.outputs()[i].name)).string();
    KILN_RETURN_IF_ERROR(write_npy(path, outputs[i]).with_context("output '" + s.outputs()[i].name + "'"));
  }
  return Status::OK();
}

// Runs `warmup` untimed then `runs` timed iterations and prints the timing table.
Status benchmark(Session& s, const std::map<std::string, Tensor>& inputs, const RunOptions& opt, double load_ms,
                 double first_ms) {
  std::vector<Tensor> outputs;
  for (int i = 0; i < opt.warmup; ++i) KILN_RETURN_IF_ERROR(s.run(inputs, &outputs));
  std::vector<double> times;
  for (int i = 0; i < opt.runs; ++i) {
    const auto start = Clock::now();
    KILN_RETURN_IF_ERROR(s.run(inputs, &outputs));
    times.push_back(ms_since(start));
  }
  std::sort(times.begin(), times.end());
  const double median = percentile(times, 0.5);
  std::printf("\ntiming (ms), backend %s, %d runs after %d warmup:\n", s.backend().c_str(), opt.runs, opt.warmup);
  std::printf("  %-10s %10.3f\n  %-10s %10.3f\n", "load", load_ms, "first run", first_ms);
  std::printf("  %-10s %10.3f\n  %-10s %10.3f\n", "median", median, "p90", percentile(times, 0.9));
  std::printf("  %-10s %10.3f\n  %-10s %10.3f\n", "min", times.front(), "max", times.back());
  std::printf("  %-10s %10.2f\n", "runs/s", median > 0 ? 1000.0 / median : 0.0);
  return Status::OK();
}

Status run_model(const RunOptions& opt) {
  if (opt.runs < 1 || opt.warmup < 0) {
    return {StatusCode::kInvalidArgument, "--runs must be at least 1 and --warmup at least 0"};
  }
  SessionOptions so;
  so.backend = opt.backend;
  so.precision = opt.precision;
  so.use_cuda_graph = !opt.no_cuda_graph;
  KILN_RETURN_IF_ERROR(apply_optimizer_flags(opt.optimizer, &so));
  std::unique_ptr<Session> session;
  auto start = Clock::now();
  KILN_RETURN_IF_ERROR(Session::load(opt.model, so, &session));
  const double load_ms = ms_since(start);

  std::map<std::string, Tensor> inputs;
  KILN_RETURN_IF_ERROR(read_inputs(*session, opt.inputs, &inputs));
  KILN_RETURN_IF_ERROR(complete_inputs(*session, opt, &inputs));

  std::vector<Tensor> outputs;
  start = Clock::now();
  KILN_RETURN_IF_ERROR(session->run(inputs, &outputs));
  const double first_ms = ms_since(start);

  if (!opt.output_dir.empty()) KILN_RETURN_IF_ERROR(write_outputs(*session, outputs, opt.output_dir));
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::printf("%s\n", summarize_tensor(session->outputs()[i].name, outputs[i]).c_str());
  }
  if (opt.runs > 1) KILN_RETURN_IF_ERROR(benchmark(*session, inputs, opt, load_ms, first_ms));
  return Status::OK();
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto opt = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand("run", "Run a model on inputs from .npy/.pb files and summarize its outputs");
  cmd->add_option("model", opt->model, "ONNX model or .plan file")->required();
  cmd->add_option("--input", opt->inputs, "An input, NAME=FILE (.npy or .pb); repeat for each input");
  cmd->add_option("--output-dir", opt->output_dir, "Write each output as DIR/<output name>.npy");
  cmd->add_option("--backend", opt->backend, "Backend to run on (auto, cpu, cuda)");
  cmd->add_option("--precision", opt->precision, "GPU build precision: fp32 (strict), tf32, fp16, bf16");
  cmd->add_flag("--no-cuda-graph", opt->no_cuda_graph, "Launch layer by layer instead of replaying a CUDA graph");
  cmd->add_option("--warmup", opt->warmup, "Untimed runs before the timed ones");
  cmd->add_option("--runs", opt->runs, "Timed runs; above 1 prints a timing table");
  cmd->add_flag("--random-inputs", opt->random_inputs, "Feed seeded random data to inputs not given (dynamic dims = 1)");
  cmd->add_option("--shape", opt->shapes, "Shape of a random input, NAME=d1,d2,...");
  cmd->add_option("--seed", opt->seed, "Seed of --random-inputs");
  add_optimizer_flags(cmd, &opt->optimizer);
  cmd->callback([opt] {
    const Status st = run_model(*opt);
    exit_code() = st.ok() ? 0 : report_error(st);
  });
}

}  // namespace kiln::cli
