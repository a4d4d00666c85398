// Summary statistics of benchmark run times (kiln bench, kiln run --runs).
#pragma once
#include <vector>

namespace kiln::cli {

// Percentile `p` (0..1) of `sorted` (ascending, non-empty) by the nearest-rank rule: the
// smallest sample with at least p of the samples at or below it, i.e. sorted[ceil(p*n) - 1]
// (p = 0 gives the minimum). No interpolation: every reported time is one that was measured.
double percentile(const std::vector<double>& sorted, double p);

struct RunStats {
  int runs = 0;
  double p50_ms = 0, p90_ms = 0, p99_ms = 0, mean_ms = 0, min_ms = 0, max_ms = 0;
  double total_ms = 0;  // sum of all timed runs
};

// Statistics of per-run times in ms (any order); all zero when `run_ms` is empty.
RunStats summarize_runs(const std::vector<double>& run_ms);

// Items per second over the timed runs: batch * runs / total time (not batch / p50, so that
// slow outliers count). 0 when nothing was timed.
double items_per_second(const RunStats& stats, long long batch);

}  // namespace kiln::cli
