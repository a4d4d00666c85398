// `kiln serve --model NAME=PATH ...`: serves models over KServe v2 (Open Inference Protocol),
// REST on --http-port and gRPC on --grpc-port, with dynamic batching. SIGTERM or SIGINT stops
// accepting requests, answers everything queued or running, then exits 0.
#include <fmt/format.h>
#include <pthread.h>

#include <csignal>
#include <cstdio>
#include <memory>

#include "cli_util.h"
#include "commands.h"
#include "opt_flags.h"
#include "serve/grpc_frontend.h"
#include "serve/http_frontend.h"
#include "serve/metrics.h"
#include "serve/model_server.h"

namespace kiln::cli {
namespace {

using serve::BatchingOptions;

struct ServeOptions {
  std::vector<std::string> models;  // NAME=PATH
  std::string host = "0.0.0.0";
  int http_port = 8000;
  int grpc_port = 8001;  // -1: no gRPC
  bool grpc_port_given = false;
  std::string backend = "auto";
  std::string precision = "fp32";
  std::vector<int> devices;
  BatchingOptions batching;
  serve::HttpOptions http;
  int64_t max_body_mb = 256;
  OptimizerFlags optimizer;
};

Status parse_models(const std::vector<std::string>& specs, std::vector<serve::ModelSpec>* out) {
  for (const std::string& spec : specs) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
      return {StatusCode::kInvalidArgument, fmt::format("--model '{}' is not of the form NAME=PATH", spec)};
    }
    const std::string name = spec.substr(0, eq);
    for (const serve::ModelSpec& m : *out) {
      if (m.name == name) return {StatusCode::kInvalidArgument, fmt::format("--model '{}' is given twice", name)};
    }
    out->push_back({name, spec.substr(eq + 1)});
  }
  return Status::OK();
}

Status check_options(const ServeOptions& opt) {
  const BatchingOptions& b = opt.batching;
  if (b.max_batch < 1 || b.max_queue < 1 || b.max_queue_delay_us < 0 || b.default_timeout_us < 0) {
    return {StatusCode::kInvalidArgument,
            "--max-batch and --max-queue must be at least 1, --max-queue-delay-us and --timeout-us at least 0"};
  }
  if (opt.http_port < 0 && opt.grpc_port < 0) return {StatusCode::kInvalidArgument, "both --http-port and --grpc-port are off"};
  if (opt.http.threads < 1 || opt.max_body_mb < 1) {
    return {StatusCode::kInvalidArgument, "--http-threads and --max-body-mb must be at least 1"};
  }
  return Status::OK();
}

// Blocks SIGTERM and SIGINT in this thread and in every thread started after it (the servers'),
// so that wait_for_stop_signal() receives them synchronously instead of a handler interrupting
// some worker.
sigset_t block_stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return set;
}

int wait_for_stop_signal(const sigset_t& set) {
  int sig = 0;
  sigwait(&set, &sig);
  return sig;
}

Status serve_models(ServeOptions opt) {
  KILN_RETURN_IF_ERROR(check_options(opt));
  serve::ServerOptions so;
  KILN_RETURN_IF_ERROR(parse_models(opt.models, &so.models));
  so.session.backend = opt.backend;
  so.session.precision = opt.precision;
  KILN_RETURN_IF_ERROR(apply_optimizer_flags(opt.optimizer, &so.session));
  so.devices = opt.devices;
  so.batching = opt.batching;
  opt.http.max_body_bytes = static_cast<size_t>(opt.max_body_mb) << 20;

  const sigset_t stop_signals = block_stop_signals();
  auto metrics = std::make_shared<serve::Metrics>();
  std::unique_ptr<serve::ModelServer> server;
  KILN_RETURN_IF_ERROR(serve::ModelServer::create(so, metrics, &server));

  std::unique_ptr<serve::HttpFrontend> http;
  if (opt.http_port >= 0) {
    KILN_RETURN_IF_ERROR(serve::HttpFrontend::start(*server, *metrics, opt.host, opt.http_port, &http, opt.http));
    std::printf("kiln serve: HTTP on %s:%d\n", opt.host.c_str(), http->port());
  }
  std::unique_ptr<serve::GrpcFrontend> grpc;
  if (opt.grpc_port >= 0 && !serve::grpc_available() && !opt.grpc_port_given) {
    std::printf("kiln serve: no gRPC (kiln was built without libgrpc++)\n");
  } else if (opt.grpc_port >= 0) {
    const Status st = serve::GrpcFrontend::start(*server, *metrics, fmt::format("{}:{}", opt.host, opt.grpc_port), &grpc);
    if (!st.ok()) {
      if (http) http->stop();
      return st.with_context("--grpc-port (-1 turns gRPC off)");
    }
    std::printf("kiln serve: gRPC on %s:%d\n", opt.host.c_str(), grpc->port());
  }
  std::string names;
  for (const serve::ModelSpec& m : so.models) names += (names.empty() ? "" : ", ") + m.name;
  std::printf("kiln serve: ready, models: %s\n", names.c_str());
  std::fflush(stdout);

  const int sig = wait_for_stop_signal(stop_signals);
  std::printf("kiln serve: %s, draining\n", sig == SIGTERM ? "SIGTERM" : "SIGINT");
  std::fflush(stdout);
  // Drain first: queued and running requests are answered (new ones get 503) while the
  // frontends still hold their connections; then the frontends stop.
  server->drain();
  if (http) http->stop();
  if (grpc) grpc->stop();
  std::printf("kiln serve: stopped\n");
  return Status::OK();
}

}  // namespace

void add_serve_command(CLI::App& app) {
  auto opt = std::make_shared<ServeOptions>();
  CLI::App* cmd = app.add_subcommand("serve", "Serve models over KServe v2 (REST and gRPC) with dynamic batching");
  cmd->add_option("--model", opt->models, "A model to serve, NAME=PATH (.onnx or .plan); repeatable")->required();
  cmd->add_option("--host", opt->host, "Address to listen on");
  cmd->add_option("--http-port", opt->http_port, "REST port (0: any free port, -1: no REST)");
  CLI::Option* grpc_port = cmd->add_option("--grpc-port", opt->grpc_port, "gRPC port (0: any free port, -1: no gRPC)");
  cmd->add_option("--backend", opt->backend, "Backend to run on (auto, cpu, cuda)");
  cmd->add_option("--precision", opt->precision, "GPU build precision: fp32 (strict), tf32, fp16, bf16");
  cmd->add_option("--devices", opt->devices, "GPUs to serve on, one replica of each model per GPU (e.g. 0,1)")
      ->delimiter(',');
  cmd->add_option("--max-batch", opt->batching.max_batch, "Requests merged into one run, at most (1: no batching)");
  cmd->add_option("--max-queue-delay-us", opt->batching.max_queue_delay_us,
                  "How long the oldest queued request waits for others to batch with");
  cmd->add_option("--max-queue", opt->batching.max_queue, "Queued requests per model; beyond, 503 at once");
  cmd->add_option("--timeout-us", opt->batching.default_timeout_us,
                  "Deadline of requests that set no 'timeout' parameter (0: none)");
  cmd->add_option("--http-threads", opt->http.threads, "REST connections served at once");
  cmd->add_option("--max-body-mb", opt->max_body_mb, "Largest REST request body, in MiB (larger: 413)");
  add_optimizer_flags(cmd, &opt->optimizer);
  cmd->callback([opt, grpc_port] {
    opt->grpc_port_given = grpc_port->count() > 0;
    const Status st = serve_models(*opt);
    exit_code() = st.ok() ? 0 : report_error(st);
  });
}

}  // namespace kiln::cli
