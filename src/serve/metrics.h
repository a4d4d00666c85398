// Serving metrics in Prometheus' text exposition format (GET /metrics): requests and failures
// by model and status, latency histograms (queue, compute, end to end), batch sizes, queue
// depth, in-flight requests, throughput and device memory. Thread-safe; cheap to update on the
// hot path (a mutex per update, no allocation after a model's first request).
#pragma once
#include <cstddef>
#include <string>

namespace kiln::serve {

class Metrics {
 public:
  Metrics();
  ~Metrics();
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  // A request answered with `http_status`; times in seconds (queue: arrival to batch start,
  // compute: the batch's run, total: arrival to answer).
  void record_request(const std::string& model, int http_status, double queue_s, double compute_s, double total_s);
  void record_batch(const std::string& model, int batch_size);
  void set_queue_depth(const std::string& model, int depth);
  void add_in_flight(const std::string& model, int delta);
  void set_device_memory(int device, size_t bytes);

  // Everything, in Prometheus text format 0.0.4.
  std::string prometheus_text() const;

 private:
  struct Impl;
  Impl* impl_;
};

}  // namespace kiln::serve
