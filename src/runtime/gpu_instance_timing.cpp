// GpuInstance's measurements: device-event timing of whole replays (kiln bench) and of each
// layer (kiln profile). Both reuse the inputs the last run() copied into the arena, so the
// copies in and out are not in the numbers (BenchResult says so).
#include <fmt/format.h>

#include <chrono>
#include <vector>

#include "backends/gpu/check.h"
#include "core/error.h"
#include "runtime/gpu_instance.h"

namespace kiln::runtime {
namespace {

// Events created once per measurement, destroyed on scope exit.
class Events {
 public:
  explicit Events(size_t n) : events_(n, nullptr) {
    for (auto& e : events_) KILN_CUDA_CHECK(cudaEventCreate(&e));
  }
  ~Events() {
    for (auto e : events_) {
      if (e) cudaEventDestroy(e);
    }
  }
  Events(const Events&) = delete;
  Events& operator=(const Events&) = delete;
  cudaEvent_t operator[](size_t i) const { return events_[i]; }

 private:
  std::vector<cudaEvent_t> events_;
};

float elapsed_ms(cudaEvent_t a, cudaEvent_t b) {
  float ms = 0;
  KILN_CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
  return ms;
}

}  // namespace

size_t GpuInstance::layer_weight_bytes() const {
  size_t n = 0;
  for (const auto& l : layers_) n += l->weight_bytes();
  return n;
}

std::string GpuInstance::layer_tactic(size_t i) const {
  return steps_[i].fallback_reason.empty() ? layers_[i]->tactic() : "CPU fallback: " + steps_[i].fallback_reason;
}

Status GpuInstance::time_runs(const BenchOptions& options, std::vector<double>* run_ms) {
  if (runs_ == 0) return invalid_argument("time_runs needs one run() first (it leaves the inputs on the device)");
  device_->make_current();
  const cudaStream_t stream = device_->stream();
  auto replay = [&] {
    if (graph_exec_) {
      KILN_CUDA_CHECK(cudaGraphLaunch(graph_exec_, stream));
    } else {
      enqueue_layers();
    }
  };
  Events ev(2);
  for (int i = 0; i < options.warmup_runs; ++i) replay();
  KILN_CUDA_CHECK(cudaStreamSynchronize(stream));
  run_ms->clear();
  const auto start = std::chrono::steady_clock::now();
  auto seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  // One replay at a time, synchronized: each number is one network's latency on the device.
  while (static_cast<int>(run_ms->size()) < options.max_runs &&
         (static_cast<int>(run_ms->size()) < options.min_runs || seconds() < options.min_seconds)) {
    KILN_CUDA_CHECK(cudaEventRecord(ev[0], stream));
    replay();
    KILN_CUDA_CHECK(cudaEventRecord(ev[1], stream));
    KILN_CUDA_CHECK(cudaEventSynchronize(ev[1]));
    run_ms->push_back(elapsed_ms(ev[0], ev[1]));
  }
  return Status::OK();
}

Status GpuInstance::profile_layers(int iterations, std::vector<LayerTime>* out) {
  if (runs_ == 0) return invalid_argument("profile_layers needs one run() first (it leaves the inputs on the device)");
  if (iterations < 1) return invalid_argument("profile needs at least one iteration, got {}", iterations);
  device_->make_current();
  const cudaStream_t stream = device_->stream();
  const size_t n = layers_.size();
  Events ev(n + 1);
  std::vector<double> total(n, 0.0);
  enqueue_layers();  // warm-up
  for (int it = 0; it < iterations; ++it) {
    for (size_t s = 0; s < n; ++s) {
      KILN_CUDA_CHECK(cudaEventRecord(ev[s], stream));
      try {
        layers_[s]->enqueue(launches_[s]);
      } catch (const gpu::GpuError& e) {
        throw gpu::GpuError(steps_[s].node->describe() + ": " + e.what());
      }
    }
    KILN_CUDA_CHECK(cudaEventRecord(ev[n], stream));
    KILN_CUDA_CHECK(cudaEventSynchronize(ev[n]));
    for (size_t s = 0; s < n; ++s) total[s] += elapsed_ms(ev[s], ev[s + 1]);
  }
  out->clear();
  for (size_t s = 0; s < n; ++s) {
    const ir::Node& node = *steps_[s].node;
    LayerTime t;
    t.name = node.name.empty() ? node.describe() : node.name;
    t.op_type = node.op_type;
    t.tactic = layer_tactic(s);
    t.ms = total[s] / iterations;
    out->push_back(std::move(t));
  }
  return Status::OK();
}

}  // namespace kiln::runtime
