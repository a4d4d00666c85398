// The gRPC frontend of `kiln serve`: KServe v2's GRPCInferenceService (ServerLive, ServerReady,
// ModelReady, ServerMetadata, ModelMetadata, ModelInfer) over a ModelServer. Inference is
// asynchronous end to end (gRPC's callback API): a waiting request holds no thread, so the
// batcher sees every concurrent request. Errors are the call's gRPC status (ServeStatus's
// grpc_code: INVALID_ARGUMENT, NOT_FOUND, UNAVAILABLE, DEADLINE_EXCEEDED, INTERNAL).
#pragma once
#include <memory>
#include <string>

#include "kiln/status.h"

namespace kiln::serve {

class Metrics;
class ModelServer;

// Whether this kiln was built with gRPC (Debian's libgrpc++-dev and protobuf-compiler-grpc).
bool grpc_available();

class GrpcFrontend {
 public:
  // Listens on `address` ("0.0.0.0:8001"; port 0 picks a free port, see port()). `server` and
  // `metrics` must outlive the frontend (or its stop()). kUnsupported in a build without gRPC.
  static Status start(ModelServer& server, Metrics& metrics, const std::string& address,
                      std::unique_ptr<GrpcFrontend>* out);
  ~GrpcFrontend();  // stop()s

  // Stops accepting calls and waits (up to 10 s) for those in flight to be answered. Call it
  // after ModelServer::drain() to answer every queued request; idempotent.
  void stop();
  int port() const;  // the port listened on

 private:
  struct Impl;
  explicit GrpcFrontend(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kiln::serve
