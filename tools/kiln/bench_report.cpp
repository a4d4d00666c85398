#include "bench_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <fstream>

namespace kiln::cli {
namespace {

double mib(size_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

}  // namespace

std::string bench_table_header() {
  return fmt::format("{:<9} {:>6} {:>6} {:>9} {:>9} {:>9} {:>9} {:>11} {:>9} {:>9} {:<11} {}\n", "precision", "batch",
                     "runs", "p50 ms", "p90 ms", "p99 ms", "mean ms", "items/s", "peak MiB", "arena MiB", "timer",
                     "graph") +
         "(items/s = batch x runs / total time of the timed runs; peak = kiln's device memory at its peak)\n";
}

std::string bench_table_row(const BenchPoint& p) {
  if (!p.error.empty()) return fmt::format("{:<9} {:>6}  error: {}\n", p.precision, p.batch, p.error);
  const RunStats& s = p.stats;
  return fmt::format("{:<9} {:>6} {:>6} {:>9.3f} {:>9.3f} {:>9.3f} {:>9.3f} {:>11.1f} {:>9.1f} {:>9.1f} {:<11} {}\n",
                     p.precision, p.batch, s.runs, s.p50_ms, s.p90_ms, s.p99_ms, s.mean_ms, p.items_per_s,
                     mib(p.result.peak_device_bytes), mib(p.result.arena_bytes), p.result.timer,
                     p.result.graph_captured ? "captured" : "-");
}

nlohmann::ordered_json bench_to_json(const BenchRun& run) {
  nlohmann::ordered_json points = nlohmann::ordered_json::array();
  for (const BenchPoint& p : run.points) {
    const BenchResult& r = p.result;
    points.push_back({{"precision", p.precision},
                      {"batch", p.batch},
                      {"runs", p.stats.runs},
                      {"p50_ms", p.stats.p50_ms},
                      {"p90_ms", p.stats.p90_ms},
                      {"p99_ms", p.stats.p99_ms},
                      {"mean_ms", p.stats.mean_ms},
                      {"min_ms", p.stats.min_ms},
                      {"items_per_s", p.items_per_s},
                      {"peak_device_bytes", r.peak_device_bytes},
                      {"process_device_bytes", r.process_device_bytes},
                      {"arena_bytes", r.arena_bytes},
                      {"weight_bytes", r.weight_bytes},
                      {"workspace_bytes", r.workspace_bytes},
                      {"timer", r.timer},
                      {"graph_captured", r.graph_captured},
                      {"end_to_end_median_ms", r.end_to_end_median_ms},
                      {"error", p.error}});
  }
  nlohmann::ordered_json j = {{"model", run.model}, {"label", run.label}, {"backend", run.backend}};
  if (!run.device.empty()) j["device"] = run.device;
  j["date"] = run.date;
  j["points"] = std::move(points);
  nlohmann::ordered_json loads = nlohmann::ordered_json::object();
  for (const auto& [precision, ms] : run.load_ms) loads[precision] = ms;
  j["load_ms"] = std::move(loads);
  return j;
}

std::vector<PlotSeries> bench_plot_series(const BenchRun& run) {
  std::vector<PlotSeries> series;
  for (const BenchPoint& p : run.points) {
    if (!p.error.empty()) continue;
    auto it = std::find_if(series.begin(), series.end(), [&](const PlotSeries& s) { return s.name == p.precision; });
    if (it == series.end()) it = series.insert(series.end(), PlotSeries{p.precision, {}});
    it->points.push_back({static_cast<double>(p.batch), p.items_per_s, p.stats.p99_ms});
  }
  return series;
}

std::string utc_now_iso() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

Status write_text_file(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  if (!(f << text) || !f.flush()) return {StatusCode::kInvalidArgument, fmt::format("cannot write '{}'", path)};
  return Status::OK();
}

}  // namespace kiln::cli
