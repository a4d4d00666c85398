// The serving core shared by the REST and gRPC frontends: the models being served (each with
// one replica per device), their metadata and readiness, and asynchronous inference through
// each model's dynamic batcher. Thread-safe.
#pragma once
#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kiln/session.h"
#include "kiln/status.h"
#include "serve/infer_types.h"

namespace kiln::serve {

class Metrics;  // metrics.h

struct ModelSpec {
  std::string name;
  std::string path;  // .onnx (built at start-up) or .plan
};

struct BatchingOptions {
  int max_batch = 8;                // requests merged into one run, at most (1: no batching)
  int64_t max_queue_delay_us = 500; // the oldest request waits at most this long for company
  int max_queue = 256;              // queued requests per model; beyond: 503 at once
  int64_t default_timeout_us = 0;   // 0: no deadline unless the request sets "timeout"
};

struct ServerOptions {
  std::vector<ModelSpec> models;
  SessionOptions session;           // backend, precision, ...
  std::vector<int> devices;         // GPU ids: one replica of each model per device; empty: one
  BatchingOptions batching;
};

using InferCallback = std::function<void(ServeStatus, InferResponse)>;

class ModelServer {
 public:
  // Loads every model (one replica per device); a model that fails to load is an error.
  static Status create(const ServerOptions& options, std::shared_ptr<Metrics> metrics,
                       std::unique_ptr<ModelServer>* out);
  virtual ~ModelServer() = default;

  virtual bool live() const = 0;
  virtual bool ready() const = 0;  // every model ready and not shutting down
  // {"name":"kiln","version":...,"extensions":[...]}
  virtual nlohmann::json server_metadata() const = 0;
  // kNotFound for an unknown model or version, kUnavailable when not ready.
  virtual ServeStatus model_ready(const std::string& name, const std::string& version) const = 0;
  // {"name","versions","platform","inputs":[{"name","datatype","shape"}],"outputs":[...]}
  virtual ServeStatus model_metadata(const std::string& name, const std::string& version,
                                     nlohmann::json* out) const = 0;

  // Validates the request against the model (names, datatypes, shapes: kBadRequest naming
  // the tensor), queues it (kUnavailable at once when the model's queue is full or the server
  // is draining) and calls `done` exactly once, from a worker thread (or at once for an error
  // found before queueing), with the response or the error (kDeadlineExceeded for a request
  // whose deadline passed before it ran).
  virtual void infer(InferRequest request, InferCallback done) = 0;

  // Stops accepting (infer answers kUnavailable), finishes everything queued or running, then
  // returns.
  virtual void drain() = 0;
};

}  // namespace kiln::serve
