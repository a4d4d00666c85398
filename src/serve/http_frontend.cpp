#include "serve/http_frontend.h"

#include <fmt/format.h>

#include <charconv>
#include <chrono>
#include <future>
#include <thread>

#include "serve/infer_types.h"
#include "serve/kserve_json.h"
#include "serve/metrics.h"
#include "serve/model_server.h"

#ifdef KILN_HAVE_HTTPLIB
#include <httplib.h>
#include <sys/socket.h>
#endif

namespace kiln::serve {

#ifdef KILN_HAVE_HTTPLIB

namespace {

using Clock = std::chrono::steady_clock;
constexpr const char* kJson = "application/json";

void send_error(httplib::Response& res, int http_status, const std::string& message) {
  res.status = http_status;
  res.set_content(error_body(message), kJson);
}

void send_status(httplib::Response& res, const ServeStatus& st) { send_error(res, st.http_status(), st.message()); }

// The model name and version (empty when the URL has none) captured by the route patterns.
std::string model_of(const httplib::Request& req) { return req.matches[1].str(); }
std::string version_of(const httplib::Request& req) { return req.matches.size() > 2 ? req.matches[2].str() : ""; }

// "(?:/versions/([^/]+))?" after /v2/models/{name}: every model route takes an optional version.
std::string model_route(const char* suffix) {
  return std::string(R"(/v2/models/([^/]+)(?:/versions/([^/]+))?)") + suffix;
}

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

}  // namespace

struct HttpFrontend::Impl {
  ModelServer& server;
  Metrics& metrics;
  httplib::Server http;
  std::thread listener;
  int port = 0;
  int listen_fd = -1;
  bool stopped = false;

  Impl(ModelServer& s, Metrics& m) : server(s), metrics(m) {}

  void add_routes();
  void count_refused(const httplib::Request& req, int http_status, Clock::time_point arrival);
  void infer(const httplib::Request& req, httplib::Response& res);
};

void HttpFrontend::Impl::add_routes() {
  http.Get("/v2/health/live", [this](const httplib::Request&, httplib::Response& res) {
    res.status = server.live() ? 200 : 503;
  });
  http.Get("/v2/health/ready", [this](const httplib::Request&, httplib::Response& res) {
    res.status = server.ready() ? 200 : 503;
  });
  http.Get("/v2", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(server.server_metadata().dump(), kJson);
  });
  http.Get(model_route("/ready"), [this](const httplib::Request& req, httplib::Response& res) {
    const ServeStatus st = server.model_ready(model_of(req), version_of(req));
    if (!st.ok()) return send_status(res, st);
    res.status = 200;
  });
  http.Get(model_route(""), [this](const httplib::Request& req, httplib::Response& res) {
    nlohmann::json meta;
    const ServeStatus st = server.model_metadata(model_of(req), version_of(req), &meta);
    if (!st.ok()) return send_status(res, st);
    res.set_content(meta.dump(), kJson);
  });
  http.Post(model_route("/infer"), [this](const httplib::Request& req, httplib::Response& res) { infer(req, res); });
  http.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(metrics.prometheus_text(), "text/plain; version=0.0.4; charset=utf-8");
  });
  // Unknown routes, wrong methods, oversized bodies: httplib sets the status with no body;
  // give them the protocol's error object.
  http.set_error_handler(httplib::Server::HandlerWithResponse([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    const std::string why = res.status == 413 ? "the request body is too large"
                            : res.status == 404 ? fmt::format("no route {} {}", req.method, req.path)
                                                : fmt::format("HTTP {} for {} {}", res.status, req.method, req.path);
    res.set_content(error_body(why), kJson);
    return httplib::Server::HandlerResponse::Handled;
  }));
  http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "unknown exception";
    try {
      std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    send_error(res, 500, "internal error: " + what);
  });
}

// A request refused before reaching the model server (the batcher never sees it), counted
// only for served models: a client's made-up names must not grow the metrics.
void HttpFrontend::Impl::count_refused(const httplib::Request& req, int http_status, Clock::time_point arrival) {
  if (server.model_ready(model_of(req), version_of(req)).code() == ServeStatus::Code::kNotFound) return;
  metrics.record_request(model_of(req), http_status, 0, 0, seconds_since(arrival));
}

// Parses, hands the request to the ModelServer and waits for its one callback; requests the
// frontend rejects itself (unparsable) are counted here, everything else by the server.
void HttpFrontend::Impl::infer(const httplib::Request& req, httplib::Response& res) {
  const Clock::time_point arrival = Clock::now();
  std::optional<size_t> json_length;
  if (req.has_header("Inference-Header-Content-Length")) {
    const std::string v = req.get_header_value("Inference-Header-Content-Length");
    size_t n = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (ec != std::errc() || end != v.data() + v.size()) {
      count_refused(req, 400, arrival);
      return send_error(res, 400, fmt::format("Inference-Header-Content-Length '{}' is not a byte count", v));
    }
    json_length = n;
  }
  InferRequest request;
  request.arrival = arrival;
  if (ServeStatus st = parse_infer_request(req.body, json_length, model_of(req), version_of(req), &request); !st.ok()) {
    count_refused(req, st.http_status(), arrival);
    return send_status(res, st);
  }
  // Which outputs go binary is decided from the request, which infer() consumes.
  InferRequest shape_of_answer;
  shape_of_answer.outputs = request.outputs;
  shape_of_answer.binary_outputs = request.binary_outputs;

  auto answer = std::make_shared<std::promise<std::pair<ServeStatus, InferResponse>>>();
  std::future<std::pair<ServeStatus, InferResponse>> done = answer->get_future();
  server.infer(std::move(request), [answer](ServeStatus st, InferResponse r) {
    answer->set_value({std::move(st), std::move(r)});
  });
  auto [st, response] = done.get();
  if (!st.ok()) return send_status(res, st);
  EncodedResponse enc = encode_infer_response(shape_of_answer, response);
  if (enc.json_length) {
    res.set_header("Inference-Header-Content-Length", std::to_string(*enc.json_length));
    res.set_content(std::move(enc.body), "application/octet-stream");
  } else {
    res.set_content(std::move(enc.body), kJson);
  }
}

Status HttpFrontend::start(ModelServer& server, Metrics& metrics, const std::string& host, int port,
                           std::unique_ptr<HttpFrontend>* out, const HttpOptions& options) {
  auto impl = std::make_unique<Impl>(server, metrics);
  const int threads = options.threads;
  impl->http.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
  impl->http.set_payload_max_length(options.max_body_bytes);
  impl->http.set_keep_alive_max_count(1000);
  impl->http.set_tcp_nodelay(true);  // small answers go out at once, not after Nagle's delay
  impl->add_routes();
  Impl* raw = impl.get();
  impl->http.set_socket_options([raw](int fd) {
    int yes = 1;  // what httplib's default does: restart at once on the same port
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    raw->listen_fd = fd;
  });
  if (port == 0) {
    impl->port = impl->http.bind_to_any_port(host);
  } else if (impl->http.bind_to_port(host, port)) {
    impl->port = port;
  }
  if (impl->port <= 0) {
    return {StatusCode::kInvalidArgument, fmt::format("cannot listen for HTTP on {}:{} (in use, or not a local address?)", host, port)};
  }
  // Debian's compiled httplib listens with a backlog of 5: a burst of clients connecting at
  // once overflows it and some get reset. Listening again only raises the backlog.
  ::listen(impl->listen_fd, SOMAXCONN);
  impl->listener = std::thread([raw] { raw->http.listen_after_bind(); });
  out->reset(new HttpFrontend(std::move(impl)));
  return Status::OK();
}

int HttpFrontend::port() const { return impl_->port; }

void HttpFrontend::stop() {
  if (impl_->stopped) return;
  impl_->stopped = true;
  impl_->http.stop();
  // listen_after_bind returns after its thread pool has finished every accepted connection.
  if (impl_->listener.joinable()) impl_->listener.join();
}

#else  // no cpp-httplib

struct HttpFrontend::Impl {};

Status HttpFrontend::start(ModelServer&, Metrics&, const std::string&, int, std::unique_ptr<HttpFrontend>*,
                           const HttpOptions&) {
  return {StatusCode::kUnsupported, "kiln was built without cpp-httplib (apt-get install libcpp-httplib-dev): no REST frontend"};
}
int HttpFrontend::port() const { return 0; }
void HttpFrontend::stop() {}

#endif

HttpFrontend::HttpFrontend(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpFrontend::~HttpFrontend() { stop(); }

}  // namespace kiln::serve
