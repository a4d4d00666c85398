// ModelServer: every model loaded once per device, described from its Session's inputs and
// outputs, requests validated here (so the batcher only sees well-formed ones) and handed to
// the model's Batcher.
#include "serve/model_server.h"

#include <atomic>
#include <map>
#include <set>

#include "serve/batcher.h"
#include "serve/metrics.h"

#ifndef KILN_VERSION
#define KILN_VERSION "0.1.0"
#endif

namespace kiln::serve {
namespace {

using Code = ServeStatus::Code;

// The only version of every served model (KServe: versions are strings).
constexpr const char* kVersion = "1";

nlohmann::json tensor_metadata(const TensorInfo& t) {
  nlohmann::json shape = nlohmann::json::array();
  for (int64_t d : t.shape) shape.push_back(d < 0 ? -1 : d);
  return {{"name", t.name}, {"datatype", datatype_of(t.dtype)}, {"shape", shape}};
}

// Checks one request input against the model input `info`: datatype, rank, fixed dims.
ServeStatus check_input(const InferTensor& in, const TensorInfo& info) {
  const Tensor& t = in.data;
  if (t.dtype() != info.dtype) {
    return {Code::kBadRequest, "input '" + in.name + "': datatype " + datatype_of(t.dtype()) + ", the model expects " +
                                   datatype_of(info.dtype)};
  }
  if (!info.has_shape) return ServeStatus::OK();
  bool fits = t.rank() == static_cast<int>(info.shape.size());
  for (size_t i = 0; fits && i < info.shape.size(); ++i) fits = info.shape[i] < 0 || info.shape[i] == t.shape()[i];
  if (!fits) {
    return {Code::kBadRequest, "input '" + in.name + "': shape " + shape_to_string(t.shape()) + ", the model expects " +
                                   shape_to_string(info.shape) + " (-1: any)"};
  }
  return ServeStatus::OK();
}

// Dims the model names alike (N in x[N,C] and y[N,C]) must agree between inputs.
ServeStatus check_named_dims(const InferTensor& in, const TensorInfo& info,
                             std::map<std::string, std::pair<int64_t, std::string>>* seen) {
  for (size_t i = 0; i < info.dim_names.size() && i < in.data.shape().size(); ++i) {
    if (info.dim_names[i].empty()) continue;
    const int64_t d = in.data.shape()[i];
    auto [it, fresh] = seen->emplace(info.dim_names[i], std::make_pair(d, in.name));
    if (!fresh && it->second.first != d) {
      return {Code::kBadRequest, "input '" + in.name + "': dim " + std::to_string(i) + " (" + info.dim_names[i] +
                                     ") is " + std::to_string(d) + " but " + std::to_string(it->second.first) +
                                     " in input '" + it->second.second + "'"};
    }
  }
  return ServeStatus::OK();
}

class Server final : public ModelServer {
 public:
  struct Model {
    std::string name;
    std::string platform;
    std::unique_ptr<Batcher> batcher;
  };

  Server(std::shared_ptr<Metrics> metrics) : metrics_(std::move(metrics)) {}
  ~Server() override { drain(); }

  Status load(const ServerOptions& options) {
    // One replica per listed GPU; a CPU session uses every core already, so the CPU (also
    // "auto" on a machine without a GPU) gets one.
    const size_t replicas = options.devices.empty() ? 1 : options.devices.size();
    for (const ModelSpec& spec : options.models) {
      if (models_.count(spec.name)) return Status(StatusCode::kInvalidArgument, "model '" + spec.name + "' given twice");
      std::vector<std::unique_ptr<Session>> sessions;
      for (size_t r = 0; r < replicas; ++r) {
        SessionOptions so = options.session;
        if (!options.devices.empty()) so.device_id = options.devices[r];
        std::unique_ptr<Session> s;
        Status st = Session::load(spec.path, so, &s);
        if (!st.ok()) {
          const std::string device = options.devices.empty() ? "" : ", GPU " + std::to_string(so.device_id);
          return st.with_context("model '" + spec.name + "' (" + spec.path + device + ")");
        }
        const bool cpu = s->backend() == "cpu";
        sessions.push_back(std::move(s));
        if (cpu) break;
      }
      auto m = std::make_unique<Model>();
      m->name = spec.name;
      m->platform = "kiln_" + sessions.front()->backend();
      m->batcher = std::make_unique<Batcher>(spec.name, std::move(sessions), options.batching, metrics_);
      models_[spec.name] = std::move(m);
    }
    default_timeout_us_ = options.batching.default_timeout_us;
    return Status::OK();
  }

  bool live() const override { return true; }
  bool ready() const override { return !draining_.load(); }

  nlohmann::json server_metadata() const override {
    return {{"name", "kiln"}, {"version", KILN_VERSION}, {"extensions", nlohmann::json::array({"binary_tensor_data"})}};
  }

  ServeStatus model_ready(const std::string& name, const std::string& version) const override {
    const Model* m = nullptr;
    ServeStatus st = find(name, version, &m);
    if (!st.ok()) return st;
    if (draining_.load()) return {Code::kUnavailable, "model '" + name + "' is not ready: the server is shutting down"};
    return ServeStatus::OK();
  }

  ServeStatus model_metadata(const std::string& name, const std::string& version,
                             nlohmann::json* out) const override {
    const Model* m = nullptr;
    ServeStatus st = find(name, version, &m);
    if (!st.ok()) return st;
    nlohmann::json inputs = nlohmann::json::array(), outputs = nlohmann::json::array();
    for (const TensorInfo& t : m->batcher->inputs()) inputs.push_back(tensor_metadata(t));
    for (const TensorInfo& t : m->batcher->outputs()) outputs.push_back(tensor_metadata(t));
    *out = {{"name", m->name},     {"versions", nlohmann::json::array({kVersion})},
            {"platform", m->platform}, {"inputs", inputs}, {"outputs", outputs}};
    return ServeStatus::OK();
  }

  void infer(InferRequest request, InferCallback done) override {
    const Model* m = nullptr;
    ServeStatus st = find(request.model_name, request.model_version, &m);
    if (st.ok() && draining_.load()) st = {Code::kUnavailable, "the server is shutting down"};
    if (st.ok()) st = validate(*m->batcher, &request);
    if (!st.ok()) {
      // Only served models get metric labels: a made-up name must not grow the metrics.
      if (m && metrics_) {
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - request.arrival).count();
        metrics_->record_request(m->name, st.http_status(), 0, 0, s);
      }
      done(st, InferResponse{});
      return;
    }
    if (!request.deadline && default_timeout_us_ > 0) {
      request.deadline = request.arrival + std::chrono::microseconds(default_timeout_us_);
    }
    m->batcher->submit(std::move(request), std::move(done));
  }

  void drain() override {
    draining_ = true;
    for (auto& [name, m] : models_) m->batcher->drain();
  }

 private:
  ServeStatus find(const std::string& name, const std::string& version, const Model** out) const {
    auto it = models_.find(name);
    if (it == models_.end()) return {Code::kNotFound, "unknown model '" + name + "'"};
    if (!version.empty() && version != kVersion) {
      return {Code::kNotFound, "model '" + name + "' has no version '" + version + "' (only '" + kVersion + "')"};
    }
    *out = it->second.get();
    return ServeStatus::OK();
  }

  // Names, datatypes and shapes against the model; puts the inputs in the model's order.
  static ServeStatus validate(const Batcher& b, InferRequest* request) {
    const std::string where = "model '" + request->model_name + "': ";
    std::map<std::string, InferTensor*> given;
    for (InferTensor& t : request->inputs) {
      if (!given.emplace(t.name, &t).second) return {Code::kBadRequest, where + "input '" + t.name + "' given twice"};
    }
    std::vector<InferTensor> ordered;
    std::map<std::string, std::pair<int64_t, std::string>> named_dims;  // dim name -> value, input
    for (const TensorInfo& info : b.inputs()) {
      auto it = given.find(info.name);
      if (it == given.end()) return {Code::kBadRequest, where + "missing input '" + info.name + "'"};
      ServeStatus st = check_input(*it->second, info);
      if (st.ok()) st = check_named_dims(*it->second, info, &named_dims);
      if (!st.ok()) return {st.code(), where + st.message()};
      ordered.push_back(std::move(*it->second));
      given.erase(it);
    }
    if (!given.empty()) return {Code::kBadRequest, where + "unknown input '" + given.begin()->first + "'"};
    request->inputs = std::move(ordered);
    std::set<std::string> outputs;
    for (const TensorInfo& o : b.outputs()) outputs.insert(o.name);
    for (const RequestedOutput& o : request->outputs) {
      if (!outputs.count(o.name)) return {Code::kBadRequest, where + "unknown output '" + o.name + "'"};
    }
    return ServeStatus::OK();
  }

  std::shared_ptr<Metrics> metrics_;
  std::map<std::string, std::unique_ptr<Model>> models_;
  std::atomic<bool> draining_{false};
  int64_t default_timeout_us_ = 0;
};

}  // namespace

Status ModelServer::create(const ServerOptions& options, std::shared_ptr<Metrics> metrics,
                           std::unique_ptr<ModelServer>* out) {
  if (options.models.empty()) return Status(StatusCode::kInvalidArgument, "no model to serve");
  auto server = std::make_unique<Server>(std::move(metrics));
  KILN_RETURN_IF_ERROR(server->load(options));
  *out = std::move(server);
  return Status::OK();
}

}  // namespace kiln::serve
