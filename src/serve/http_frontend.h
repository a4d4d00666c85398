// The KServe v2 REST frontend (cpp-httplib): health, metadata and inference routes over a
// ModelServer, and Prometheus' GET /metrics.
//   GET  /v2/health/live, /v2/health/ready        200, or 503 when not live/ready
//   GET  /v2                                       server metadata
//   GET  /v2/models/{name}[/versions/{v}]          model metadata
//   GET  /v2/models/{name}[/versions/{v}]/ready    200, 404 unknown model, 503 not ready
//   POST /v2/models/{name}[/versions/{v}]/infer    JSON or binary tensor extension
//   GET  /metrics                                  Prometheus text format 0.0.4
// Errors answer {"error": "..."} with the protocol's status (400, 404, 413, 503, 504, 500).
#pragma once
#include <cstddef>
#include <memory>
#include <string>

#include "kiln/status.h"

namespace kiln::serve {

class ModelServer;
class Metrics;

struct HttpOptions {
  // Each open connection holds a thread while it waits for its answer, so this bounds the
  // clients served at once (more wait in the kernel's accept queue).
  int threads = 64;
  size_t max_body_bytes = size_t{256} << 20;  // larger bodies: 413
};

class HttpFrontend {
 public:
  // Binds host:port (port 0: any free port, see port()) and serves on background threads.
  // Fails (nothing started) when the address cannot be bound or kiln was built without
  // cpp-httplib.
  static Status start(ModelServer& server, Metrics& metrics, const std::string& host, int port,
                      std::unique_ptr<HttpFrontend>* out, const HttpOptions& options = {});
  ~HttpFrontend();

  int port() const;
  // Stops accepting connections and returns once every request already being handled has
  // been answered. Idempotent.
  void stop();

  struct Impl;

 private:
  explicit HttpFrontend(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kiln::serve
