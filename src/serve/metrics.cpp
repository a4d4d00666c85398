// Prometheus text exposition (format 0.0.4) of the serving metrics. One mutex guards all the
// state: an update is a map lookup and a few additions, far cheaper than any inference, and
// a scrape (a few times a minute) copies nothing it does not print.
#include "serve/metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <map>
#include <mutex>

namespace kiln::serve {
namespace {

using Clock = std::chrono::steady_clock;

// Latency buckets (seconds): 100 µs (a GPU batch-1 run) to 10 s (a very overloaded CPU).
constexpr std::array<double, 16> kLatencyBuckets = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                                    0.05,   0.1,     0.25,   0.5,   1,      2.5,   5,     10};
// Batch sizes: powers of two, which is what --max-batch usually is.
constexpr std::array<double, 9> kBatchBuckets = {1, 2, 4, 8, 16, 32, 64, 128, 256};

// Throughput is counted in one-second slots over a sliding window of kWindowSeconds.
constexpr int kWindowSeconds = 10;

template <size_t N>
struct Histogram {
  const std::array<double, N>* bounds;
  std::array<uint64_t, N> counts{};  // per bucket (not cumulative; made cumulative when printed)
  uint64_t count = 0;
  double sum = 0;

  explicit Histogram(const std::array<double, N>& b) : bounds(&b) {}
  void observe(double v) {
    for (size_t i = 0; i < N; ++i) {
      if (v <= (*bounds)[i]) {
        ++counts[i];
        break;
      }
    }
    ++count;
    sum += v;
  }
};

struct ModelStats {
  std::map<int, uint64_t> requests;  // by HTTP status
  Histogram<kLatencyBuckets.size()> queue{kLatencyBuckets};
  Histogram<kLatencyBuckets.size()> compute{kLatencyBuckets};
  Histogram<kLatencyBuckets.size()> total{kLatencyBuckets};
  Histogram<kBatchBuckets.size()> batch{kBatchBuckets};
  int queue_depth = 0;
  int64_t in_flight = 0;
  // Completed requests per second slot: slot_second[i] says which second slot i counts.
  std::array<uint64_t, kWindowSeconds> slot_count{};
  std::array<int64_t, kWindowSeconds> slot_second{};
};

// Label values escape backslash, double quote and newline, as the text format requires.
std::string escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

void header(std::string& out, const char* name, const char* type, const char* help) {
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

template <size_t N>
void print_histogram(std::string& out, const char* name, const std::string& labels, const Histogram<N>& h) {
  uint64_t cumulative = 0;
  for (size_t i = 0; i < N; ++i) {
    cumulative += h.counts[i];
    out += fmt::format("{}_bucket{{{},le=\"{}\"}} {}\n", name, labels, (*h.bounds)[i], cumulative);
  }
  out += fmt::format("{}_bucket{{{},le=\"+Inf\"}} {}\n", name, labels, h.count);
  out += fmt::format("{}_sum{{{}}} {}\n", name, labels, h.sum);
  out += fmt::format("{}_count{{{}}} {}\n", name, labels, h.count);
}

}  // namespace

struct Metrics::Impl {
  mutable std::mutex mu;
  Clock::time_point start = Clock::now();
  std::map<std::string, ModelStats, std::less<>> models;
  std::map<int, size_t> device_memory;

  ModelStats& model(const std::string& name) {
    auto it = models.find(name);
    if (it == models.end()) it = models.emplace(name, ModelStats{}).first;
    return it->second;
  }
  int64_t second_now() const {
    return std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - start).count();
  }

  // Requests per second over the last kWindowSeconds: the requests completed in the current
  // (partial) second and the kWindowSeconds-1 before it, divided by the time that window
  // really spans (shorter right after start, so a fresh server is not under-reported).
  double throughput(const ModelStats& m) const {
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    const int64_t now = static_cast<int64_t>(elapsed);
    uint64_t n = 0;
    for (int i = 0; i < kWindowSeconds; ++i) {
      if (m.slot_count[i] > 0 && m.slot_second[i] > now - kWindowSeconds) n += m.slot_count[i];
    }
    const double window = std::min(elapsed, (kWindowSeconds - 1) + (elapsed - static_cast<double>(now)));
    return window > 0 ? static_cast<double>(n) / window : 0.0;
  }
};

Metrics::Metrics() : impl_(new Impl) {}
Metrics::~Metrics() { delete impl_; }

void Metrics::record_request(const std::string& model, int http_status, double queue_s, double compute_s,
                             double total_s) {
  std::lock_guard lock(impl_->mu);
  ModelStats& m = impl_->model(model);
  ++m.requests[http_status];
  // Queue and compute times describe requests that ran; a request refused before it ran
  // (400, 503, an expired deadline) only counts in the end-to-end latency.
  if (http_status == 200) {
    m.queue.observe(queue_s);
    m.compute.observe(compute_s);
  }
  m.total.observe(total_s);
  const int64_t sec = impl_->second_now();
  const size_t slot = static_cast<size_t>(sec % kWindowSeconds);
  if (m.slot_second[slot] != sec) {
    m.slot_second[slot] = sec;
    m.slot_count[slot] = 0;
  }
  ++m.slot_count[slot];
}

void Metrics::record_batch(const std::string& model, int batch_size) {
  std::lock_guard lock(impl_->mu);
  impl_->model(model).batch.observe(batch_size);
}

void Metrics::set_queue_depth(const std::string& model, int depth) {
  std::lock_guard lock(impl_->mu);
  impl_->model(model).queue_depth = depth;
}

void Metrics::add_in_flight(const std::string& model, int delta) {
  std::lock_guard lock(impl_->mu);
  impl_->model(model).in_flight += delta;
}

void Metrics::set_device_memory(int device, size_t bytes) {
  std::lock_guard lock(impl_->mu);
  impl_->device_memory[device] = bytes;
}

std::string Metrics::prometheus_text() const {
  std::lock_guard lock(impl_->mu);
  std::string out;
  auto per_model = [&](const char* name, const char* type, const char* help, auto&& print) {
    header(out, name, type, help);
    for (const auto& [model, m] : impl_->models) print(fmt::format("model=\"{}\"", escape(model)), m);
  };
  per_model("kiln_requests_total", "counter", "Requests answered, by model and HTTP status.",
            [&](const std::string& l, const ModelStats& m) {
              for (const auto& [status, n] : m.requests) out += fmt::format("kiln_requests_total{{{},status=\"{}\"}} {}\n", l, status, n);
            });
  per_model("kiln_request_failures_total", "counter", "Requests answered with an error, by model and HTTP status.",
            [&](const std::string& l, const ModelStats& m) {
              for (const auto& [status, n] : m.requests) {
                if (status >= 400) out += fmt::format("kiln_request_failures_total{{{},status=\"{}\"}} {}\n", l, status, n);
              }
            });
  per_model("kiln_queue_seconds", "histogram", "Time from arrival to the start of the request's batch (served requests).",
            [&](const std::string& l, const ModelStats& m) { print_histogram(out, "kiln_queue_seconds", l, m.queue); });
  per_model("kiln_compute_seconds", "histogram", "Run time of the batch that served the request.",
            [&](const std::string& l, const ModelStats& m) { print_histogram(out, "kiln_compute_seconds", l, m.compute); });
  per_model("kiln_request_seconds", "histogram", "Time from arrival to answer (every request, errors included).",
            [&](const std::string& l, const ModelStats& m) { print_histogram(out, "kiln_request_seconds", l, m.total); });
  per_model("kiln_batch_size", "histogram", "Requests merged into each run.",
            [&](const std::string& l, const ModelStats& m) { print_histogram(out, "kiln_batch_size", l, m.batch); });
  per_model("kiln_queue_depth", "gauge", "Requests waiting in the model's queue.",
            [&](const std::string& l, const ModelStats& m) { out += fmt::format("kiln_queue_depth{{{}}} {}\n", l, m.queue_depth); });
  per_model("kiln_in_flight", "gauge", "Requests accepted and not answered yet.",
            [&](const std::string& l, const ModelStats& m) { out += fmt::format("kiln_in_flight{{{}}} {}\n", l, m.in_flight); });
  per_model("kiln_throughput", "gauge",
            "Requests answered per second over the last 10 s (completions in one-second slots / time the window spans).",
            [&](const std::string& l, const ModelStats& m) { out += fmt::format("kiln_throughput{{{}}} {}\n", l, impl_->throughput(m)); });
  header(out, "kiln_device_memory_bytes", "gauge", "Device memory in use, by device.");
  for (const auto& [device, bytes] : impl_->device_memory) {
    out += fmt::format("kiln_device_memory_bytes{{device=\"{}\"}} {}\n", device, bytes);
  }
  return out;
}

}  // namespace kiln::serve
