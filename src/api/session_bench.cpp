// Session's default benchmark and profile: host-clock timing of run(), for backends without
// device timers (the CPU). GPU sessions override both with device events.
#include <algorithm>
#include <chrono>
#include <vector>

#include "core/error.h"
#include "kiln/session.h"

namespace kiln {

Status Session::benchmark(const std::map<std::string, Tensor>& inputs, const BenchOptions& options,
                          BenchResult* result) {
  using clock = std::chrono::steady_clock;
  *result = BenchResult{};
  result->timer = "host-clock";
  std::vector<Tensor> outputs;
  for (int i = 0; i < options.warmup_runs; ++i) KILN_RETURN_IF_ERROR(run(inputs, &outputs));
  const auto start = clock::now();
  auto elapsed_s = [&] { return std::chrono::duration<double>(clock::now() - start).count(); };
  while (static_cast<int>(result->run_ms.size()) < options.max_runs &&
         (static_cast<int>(result->run_ms.size()) < options.min_runs || elapsed_s() < options.min_seconds)) {
    const auto t0 = clock::now();
    KILN_RETURN_IF_ERROR(run(inputs, &outputs));
    result->run_ms.push_back(std::chrono::duration<double, std::milli>(clock::now() - t0).count());
  }
  std::vector<double> sorted = result->run_ms;
  std::sort(sorted.begin(), sorted.end());
  if (!sorted.empty()) result->end_to_end_median_ms = sorted[(sorted.size() - 1) / 2];  // nearest-rank median
  return Status::OK();
}

Status Session::profile(const std::map<std::string, Tensor>&, int, std::vector<LayerTime>*) {
  return unsupported("per-layer profiling needs a GPU session (backend '{}' has no device timers)", backend());
}

}  // namespace kiln
