// `kiln bench MODEL_OR_PLAN`: latency percentiles, throughput and device memory per precision
// and batch size, as a table, a JSON file (--json) and a two-panel SVG plot (--plot).
#include <chrono>
#include <fmt/format.h>

#include <cstdio>
#include <exception>
#include <memory>

#include "bench_report.h"
#include "cli_util.h"
#include "commands.h"
#include "kiln/doctor.h"
#include "kiln/kiln.h"
#include "opt_flags.h"
#include "plan_peek.h"
#include "random_inputs.h"

namespace kiln::cli {
namespace {

struct BenchCliOptions {
  std::string model;
  std::string backend = "auto";
  std::vector<std::string> precisions{"fp32"};
  std::vector<int64_t> batches{1};
  std::vector<std::string> shapes;
  bool no_graph = false;
  int warmup = 10;
  int runs = 100;
  double min_seconds = 1.0;
  std::string json, plot, label;
  OptimizerFlags optimizer;
  bool precision_given = false;  // --precision on the command line (vs the default)
};

// A batch size the model cannot take (no input has a dynamic dim 0) is an error, not a
// mislabelled row.
Status check_batch(const Session& s, int64_t batch) {
  for (const TensorInfo& in : s.inputs()) {
    if (!in.has_shape || in.shape.empty()) continue;
    if (in.shape[0] < 0 || in.shape[0] == batch) return Status::OK();
  }
  return {StatusCode::kInvalidArgument,
          fmt::format("no input has a dynamic first dimension to set to batch {} (inputs: {})", batch,
                      quoted_names(s.inputs()))};
}

// One point: random inputs at `batch`, Session::benchmark, statistics.
Status bench_point(Session& s, const BenchCliOptions& opt, int64_t batch, BenchPoint* point) {
  KILN_RETURN_IF_ERROR(check_batch(s, batch));
  RandomInputOptions random;
  random.shapes = opt.shapes;
  random.batch = batch;
  std::map<std::string, Tensor> inputs;
  KILN_RETURN_IF_ERROR(fill_random_inputs(s, random, &inputs));
  BenchOptions bo;
  bo.warmup_runs = opt.warmup;
  bo.min_runs = opt.runs;
  bo.min_seconds = opt.min_seconds;
  KILN_RETURN_IF_ERROR(s.benchmark(inputs, bo, &point->result));
  point->stats = summarize_runs(point->result.run_ms);
  point->items_per_s = items_per_second(point->stats, batch);
  point->result.run_ms.clear();  // summarized; not kept per point
  return Status::OK();
}

// The GPU a CUDA session runs on, e.g. "NVIDIA H200 (sm_90)"; "" on the CPU.
std::string device_name(const std::string& backend) {
  if (backend != "cuda") return "";
  const DoctorReport report = run_doctor();
  if (report.gpus.empty()) return "";
  return fmt::format("{} (sm_{})", report.gpus[0].name, report.gpus[0].sm);
}

// Runs every point; `*failed` counts the points that failed. Errors returned here stop the
// whole benchmark (bad options, unwritable output files).
Status run_bench(BenchCliOptions opt, int* failed) {
  if (opt.runs < 1 || opt.warmup < 0 || opt.min_seconds < 0) {
    return {StatusCode::kInvalidArgument, "--runs must be at least 1, --warmup and --min-seconds at least 0"};
  }
  for (int64_t b : opt.batches) {
    if (b < 1) return {StatusCode::kInvalidArgument, fmt::format("--batch {}: a batch size is at least 1", b)};
  }
  KILN_RETURN_IF_ERROR(plan_precisions(opt.model, opt.precision_given, &opt.precisions));
  // Output files are created now, so that an unwritable path fails before a long benchmark.
  for (const std::string& path : {opt.json, opt.plot}) {
    if (!path.empty()) KILN_RETURN_IF_ERROR(write_text_file(path, ""));
  }
  SessionOptions so;
  so.backend = opt.backend;
  so.use_cuda_graph = !opt.no_graph;
  KILN_RETURN_IF_ERROR(apply_optimizer_flags(opt.optimizer, &so));

  BenchRun run{opt.model, opt.label, opt.backend, "", utc_now_iso(), {}};
  std::printf("kiln bench %s\n%s", opt.model.c_str(), bench_table_header().c_str());
  for (const std::string& precision : opt.precisions) {
    so.precision = precision;
    std::unique_ptr<Session> session;
    const auto load_start = std::chrono::steady_clock::now();
    const Status loaded = Session::load(opt.model, so, &session);
    if (loaded.ok()) {
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - load_start).count();
      run.load_ms.emplace_back(precision, ms);
      std::printf("(%s: loaded in %.1f ms)\n", precision.c_str(), ms);
    }
    if (loaded.ok() && run.device.empty()) {
      run.backend = session->backend();
      run.device = device_name(run.backend);
    }
    for (int64_t batch : opt.batches) {
      BenchPoint point{precision, batch, {}, 0, {}, ""};
      Status st = loaded;
      try {  // host memory can run out at a large batch: that point fails, the others run
        if (loaded.ok()) st = bench_point(*session, opt, batch, &point);
      } catch (const std::exception& e) {
        st = {StatusCode::kInternal, e.what()};
      }
      if (!st.ok()) {
        point = BenchPoint{precision, batch, {}, 0, {}, st.to_string()};
        ++*failed;
      }
      std::printf("%s", bench_table_row(point).c_str());
      std::fflush(stdout);
      run.points.push_back(std::move(point));
    }
  }
  if (!opt.json.empty()) KILN_RETURN_IF_ERROR(write_text_file(opt.json, bench_to_json(run).dump(1) + "\n"));
  if (!opt.plot.empty()) {
    const std::string title = fmt::format("kiln bench {}{}{}", opt.label.empty() ? opt.model : opt.label,
                                          run.device.empty() ? "" : " on ", run.device);
    KILN_RETURN_IF_ERROR(write_text_file(opt.plot, render_bench_svg(title, bench_plot_series(run))));
  }
  return Status::OK();
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto opt = std::make_shared<BenchCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "bench", "Benchmark a model or plan: latency percentiles, throughput and memory per precision and batch size");
  cmd->add_option("model", opt->model, "ONNX model or .plan file")->required();
  cmd->add_option("--backend", opt->backend, "Backend to run on (auto, cpu, cuda)");
  CLI::Option* precision = cmd->add_option("--precision", opt->precisions, "Precisions, comma-separated: fp32,tf32,fp16,bf16")
                               ->delimiter(',')
                               ->check(CLI::IsMember({"fp32", "tf32", "fp16", "bf16"}));
  cmd->add_option("--batch", opt->batches, "Batch sizes, comma-separated (replace dim 0 of dynamic-batch inputs)")
      ->delimiter(',');
  cmd->add_option("--shape", opt->shapes, "Shape of an input with dynamic dims, NAME=d1,d2,... (dim 0 becomes the batch)");
  cmd->add_flag("--no-graph", opt->no_graph, "Launch layer by layer instead of replaying a CUDA graph");
  cmd->add_option("--warmup", opt->warmup, "Untimed runs before each point's timed runs (default 10)");
  cmd->add_option("--runs", opt->runs, "Timed runs per point, at least (default 100)");
  cmd->add_option("--min-seconds", opt->min_seconds, "Time each point at least this long (default 1)");
  cmd->add_option("--json", opt->json, "Write the results as JSON to this file");
  cmd->add_option("--plot", opt->plot, "Draw throughput and p99 latency against batch size into this SVG file");
  cmd->add_option("--label", opt->label, "A name for this run in the JSON and the plot title");
  add_optimizer_flags(cmd, &opt->optimizer);
  cmd->callback([opt, precision] {
    opt->precision_given = precision->count() > 0;
    int failed = 0;
    const Status st = run_bench(*opt, &failed);
    if (!st.ok()) {
      exit_code() = report_error(st);
    } else if (failed > 0) {
      std::fprintf(stderr, "kiln: error: %d of the benchmark points failed (see their rows)\n", failed);
      exit_code() = 1;
    }
  });
}

}  // namespace kiln::cli
