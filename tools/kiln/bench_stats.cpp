#include "bench_stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace kiln::cli {

double percentile(const std::vector<double>& sorted, double p) {
  const double n = static_cast<double>(sorted.size());
  const double rank = std::ceil(std::clamp(p, 0.0, 1.0) * n);  // 1-based
  const size_t index = rank < 1 ? 0 : static_cast<size_t>(rank) - 1;
  return sorted[std::min(index, sorted.size() - 1)];
}

RunStats summarize_runs(const std::vector<double>& run_ms) {
  RunStats s;
  if (run_ms.empty()) return s;
  std::vector<double> sorted = run_ms;
  std::sort(sorted.begin(), sorted.end());
  s.runs = static_cast<int>(sorted.size());
  s.p50_ms = percentile(sorted, 0.50);
  s.p90_ms = percentile(sorted, 0.90);
  s.p99_ms = percentile(sorted, 0.99);
  s.min_ms = sorted.front();
  s.max_ms = sorted.back();
  s.total_ms = std::accumulate(sorted.begin(), sorted.end(), 0.0);
  s.mean_ms = s.total_ms / static_cast<double>(s.runs);
  return s;
}

double items_per_second(const RunStats& stats, long long batch) {
  if (stats.total_ms <= 0) return 0;
  return static_cast<double>(batch) * stats.runs * 1000.0 / stats.total_ms;
}

}  // namespace kiln::cli
