// A self-contained SVG of benchmark results (kiln bench --plot): two panels side by side,
// throughput and p99 latency against batch size (log2 x axis), one coloured line with markers
// per series (precision), axes with ticks, a legend and a title. No libraries: plain text.
#pragma once
#include <string>
#include <vector>

namespace kiln::cli {

struct PlotPoint {
  double batch = 0;
  double items_per_s = 0;
  double p99_ms = 0;
};

struct PlotSeries {
  std::string name;               // legend text, e.g. "fp16"
  std::vector<PlotPoint> points;  // failed points left out; any order
};

// The whole SVG document. Points with a non-positive batch or value are skipped.
std::string render_bench_svg(const std::string& title, const std::vector<PlotSeries>& series);

// Escapes &, <, >, " for SVG text and attributes.
std::string xml_escape(const std::string& text);

}  // namespace kiln::cli
