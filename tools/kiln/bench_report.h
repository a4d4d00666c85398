// What `kiln bench` measured and how it is shown: the table rows, the JSON file and the plot.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "bench_stats.h"
#include "kiln/session.h"
#include "kiln/status.h"
#include "svg_plot.h"

namespace kiln::cli {

// One (precision, batch) point: its statistics, or the error that stopped it.
struct BenchPoint {
  std::string precision;
  int64_t batch = 0;
  RunStats stats;
  double items_per_s = 0;
  BenchResult result;  // memory, timer, graph capture (run_ms summarized in `stats`)
  std::string error;   // non-empty: the point failed, the numbers are zero
};

struct BenchRun {
  std::string model, label, backend, device, date;
  std::vector<BenchPoint> points;
  // Session::load time per precision (import + optimization + building the model's static
  // shapes: for a GPU .onnx that includes tactic timing; for a .plan it is the plan load).
  std::vector<std::pair<std::string, double>> load_ms;
};

// The table's column header (two lines: names, then what items/s means) and one row.
std::string bench_table_header();
std::string bench_table_row(const BenchPoint& point);

// {"model","label","backend","device","date","points":[{precision,batch,runs,p50_ms,p90_ms,
//  p99_ms,mean_ms,min_ms,items_per_s,peak_device_bytes,process_device_bytes,arena_bytes,
//  weight_bytes,workspace_bytes,timer,graph_captured,end_to_end_median_ms,error}],
//  "load_ms":{precision: ms}}
nlohmann::ordered_json bench_to_json(const BenchRun& run);

// One series per precision (in first-seen order) of the points that succeeded.
std::vector<PlotSeries> bench_plot_series(const BenchRun& run);

// "2026-12-02T15:35:53Z"
std::string utc_now_iso();

// Writes `text` to `path` (replacing it); the error names the file.
Status write_text_file(const std::string& path, const std::string& text);

}  // namespace kiln::cli
