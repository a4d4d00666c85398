#include "serve/grpc_frontend.h"

#if KILN_HAVE_GRPC
#include <grpcpp/grpcpp.h>

#include <climits>

#include "kserve/grpc_service.grpc.pb.h"
#include "serve/grpc_codec.h"
#include "serve/metrics.h"
#include "serve/model_server.h"
#endif

namespace kiln::serve {

#if !KILN_HAVE_GRPC

bool grpc_available() { return false; }

struct GrpcFrontend::Impl {};
GrpcFrontend::GrpcFrontend(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GrpcFrontend::~GrpcFrontend() = default;
void GrpcFrontend::stop() {}
int GrpcFrontend::port() const { return 0; }

Status GrpcFrontend::start(ModelServer&, Metrics&, const std::string&, std::unique_ptr<GrpcFrontend>*) {
  return {StatusCode::kUnsupported,
          "this kiln was built without gRPC (install libgrpc++-dev and protobuf-compiler-grpc, then rebuild)"};
}

#else

bool grpc_available() { return true; }

namespace {

using inference::GRPCInferenceService;

// Inputs larger than gRPC's 4 MiB default are common (a batch of images); this bounds them.
constexpr int kMaxReceiveBytes = 256 << 20;

grpc::Status to_grpc(const ServeStatus& st) {
  if (st.ok()) return grpc::Status::OK;
  return {static_cast<grpc::StatusCode>(st.grpc_code()), st.message()};
}

grpc::ServerUnaryReactor* finish(grpc::CallbackServerContext* ctx, const grpc::Status& st) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  reactor->Finish(st);
  return reactor;
}

// The call's own gRPC deadline, when the client set one, bounds the request too.
void apply_call_deadline(const grpc::CallbackServerContext& ctx, InferRequest* request) {
  const auto call_deadline = ctx.deadline();
  if (call_deadline == std::chrono::system_clock::time_point::max()) return;
  const auto remaining = call_deadline - std::chrono::system_clock::now();
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(remaining);
  if (!request->deadline || deadline < *request->deadline) request->deadline = deadline;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

void copy_tensor_metadata(const nlohmann::json& tensors,
                          google::protobuf::RepeatedPtrField<inference::ModelMetadataResponse::TensorMetadata>* out) {
  if (!tensors.is_array()) return;
  for (const auto& t : tensors) {
    auto* m = out->Add();
    m->set_name(t.value("name", ""));
    m->set_datatype(t.value("datatype", ""));
    for (const auto& d : t.value("shape", nlohmann::json::array())) m->add_shape(d.get<int64_t>());
  }
}

class Service final : public GRPCInferenceService::CallbackService {
 public:
  Service(ModelServer& server, Metrics& metrics) : server_(server), metrics_(metrics) {}

  grpc::ServerUnaryReactor* ServerLive(grpc::CallbackServerContext* ctx, const inference::ServerLiveRequest*,
                                       inference::ServerLiveResponse* out) override {
    out->set_live(server_.live());
    return finish(ctx, grpc::Status::OK);
  }

  grpc::ServerUnaryReactor* ServerReady(grpc::CallbackServerContext* ctx, const inference::ServerReadyRequest*,
                                        inference::ServerReadyResponse* out) override {
    out->set_ready(server_.ready());
    return finish(ctx, grpc::Status::OK);
  }

  // Not ready (loading, draining) is an answer, ready=false; an unknown model is an error.
  grpc::ServerUnaryReactor* ModelReady(grpc::CallbackServerContext* ctx, const inference::ModelReadyRequest* in,
                                       inference::ModelReadyResponse* out) override {
    const ServeStatus st = server_.model_ready(in->name(), in->version());
    if (!st.ok() && st.code() != ServeStatus::Code::kUnavailable) return finish(ctx, to_grpc(st));
    out->set_ready(st.ok());
    return finish(ctx, grpc::Status::OK);
  }

  grpc::ServerUnaryReactor* ServerMetadata(grpc::CallbackServerContext* ctx, const inference::ServerMetadataRequest*,
                                           inference::ServerMetadataResponse* out) override {
    const nlohmann::json meta = server_.server_metadata();
    out->set_name(meta.value("name", "kiln"));
    out->set_version(meta.value("version", ""));
    for (const auto& e : meta.value("extensions", nlohmann::json::array())) out->add_extensions(e.get<std::string>());
    return finish(ctx, grpc::Status::OK);
  }

  grpc::ServerUnaryReactor* ModelMetadata(grpc::CallbackServerContext* ctx, const inference::ModelMetadataRequest* in,
                                          inference::ModelMetadataResponse* out) override {
    nlohmann::json meta;
    const ServeStatus st = server_.model_metadata(in->name(), in->version(), &meta);
    if (!st.ok()) return finish(ctx, to_grpc(st));
    out->set_name(meta.value("name", in->name()));
    for (const auto& v : meta.value("versions", nlohmann::json::array())) out->add_versions(v.get<std::string>());
    out->set_platform(meta.value("platform", ""));
    copy_tensor_metadata(meta.value("inputs", nlohmann::json::array()), out->mutable_inputs());
    copy_tensor_metadata(meta.value("outputs", nlohmann::json::array()), out->mutable_outputs());
    return finish(ctx, grpc::Status::OK);
  }

  // Answered from the batcher's worker thread through the reactor; `out` lives until then.
  grpc::ServerUnaryReactor* ModelInfer(grpc::CallbackServerContext* ctx, const inference::ModelInferRequest* in,
                                       inference::ModelInferResponse* out) override {
    InferRequest request;
    const ServeStatus decoded = decode_infer_request(*in, &request);
    if (!decoded.ok()) {
      // Refused before reaching the model server: counted here, the batcher never sees it
      // (only for served models: a client's made-up names must not grow the metrics).
      if (server_.model_ready(in->model_name(), in->model_version()).code() != ServeStatus::Code::kNotFound) {
        metrics_.record_request(in->model_name(), decoded.http_status(), 0, 0, seconds_since(request.arrival));
      }
      return finish(ctx, to_grpc(decoded));
    }
    apply_call_deadline(*ctx, &request);
    grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
    server_.infer(std::move(request), [reactor, out](ServeStatus st, InferResponse response) {
      if (st.ok()) encode_infer_response(response, out);
      reactor->Finish(to_grpc(st));
    });
    return reactor;
  }

 private:
  ModelServer& server_;
  Metrics& metrics_;
};

}  // namespace

struct GrpcFrontend::Impl {
  std::unique_ptr<Service> service;
  std::unique_ptr<grpc::Server> server;
  int port = 0;
};

GrpcFrontend::GrpcFrontend(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GrpcFrontend::~GrpcFrontend() { stop(); }

Status GrpcFrontend::start(ModelServer& server, Metrics& metrics, const std::string& address,
                           std::unique_ptr<GrpcFrontend>* out) {
  auto impl = std::make_unique<Impl>();
  impl->service = std::make_unique<Service>(server, metrics);
  grpc::ServerBuilder builder;
  builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &impl->port);
  // Two servers on one port would silently split the traffic: the second one fails instead.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.SetMaxReceiveMessageSize(kMaxReceiveBytes);
  builder.SetMaxSendMessageSize(INT_MAX);
  builder.RegisterService(impl->service.get());
  impl->server = builder.BuildAndStart();
  if (!impl->server || impl->port == 0) {
    return {StatusCode::kInvalidArgument, "gRPC: cannot listen on '" + address + "' (in use, or not host:port)"};
  }
  out->reset(new GrpcFrontend(std::move(impl)));
  return Status::OK();
}

void GrpcFrontend::stop() {
  if (!impl_->server) return;
  impl_->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(10));
  impl_->server->Wait();
  impl_->server.reset();
}

int GrpcFrontend::port() const { return impl_->port; }

#endif  // KILN_HAVE_GRPC

}  // namespace kiln::serve
