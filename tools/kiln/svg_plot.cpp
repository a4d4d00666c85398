#include "svg_plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>

namespace kiln::cli {
namespace {

constexpr double kPanelW = 440, kPanelH = 320;   // one panel, axes included
constexpr double kLeft = 70, kRight = 20, kTop = 30, kBottom = 50;  // plot area margins
constexpr double kTitleH = 40, kLegendH = 30;
// Colour-blind-safe palette (Okabe-Ito), one per series in order.
constexpr const char* kColors[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"};

struct Range {
  double lo = 0, hi = 1;
};

// A "nice" upper bound for a linear y axis starting at 0: 1, 2 or 5 times a power of ten.
double nice_ceiling(double v) {
  if (v <= 0) return 1;
  const double p = std::pow(10.0, std::floor(std::log10(v)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * p >= v) return m * p;
  }
  return 10 * p;
}

std::string number(double v) {
  if (v >= 10000) return fmt::format("{:.0f}k", v / 1000);
  if (v >= 100 || v == std::floor(v)) return fmt::format("{:.0f}", v);
  if (v >= 1) return fmt::format("{:.1f}", v);
  return fmt::format("{:.2g}", v);
}

// One panel at x offset `ox`: frame, ticks, labels and one polyline with markers per series.
void draw_panel(std::string& svg, double ox, double oy, const std::string& y_label, Range xr,
                const std::vector<PlotSeries>& series, const std::function<double(const PlotPoint&)>& value) {
  double y_max = 0;
  for (const PlotSeries& s : series) {
    for (const PlotPoint& p : s.points) y_max = std::max(y_max, value(p));
  }
  y_max = nice_ceiling(y_max);
  const double w = kPanelW - kLeft - kRight, h = kPanelH - kTop - kBottom;
  const double x0 = ox + kLeft, y0 = oy + kTop;
  // Markers stay off the frame: the x range maps to the width less a margin on each side.
  const double pad = 16;
  auto px = [&](double batch) {
    const double span = xr.hi - xr.lo;
    return x0 + pad + (span > 0 ? (std::log2(batch) - xr.lo) / span * (w - 2 * pad) : (w - 2 * pad) / 2);
  };
  auto py = [&](double v) { return y0 + h - v / y_max * h; };

  svg += fmt::format("<g class=\"panel\">\n<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#444\"/>\n",
                     x0, y0, w, h);
  for (int e = static_cast<int>(std::floor(xr.lo)); e <= static_cast<int>(std::ceil(xr.hi)); ++e) {
    const double b = std::ldexp(1.0, e), x = px(b);
    svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#ddd\"/>"
                       "<text x=\"{0:.1f}\" y=\"{3:.1f}\" text-anchor=\"middle\">{4}</text>\n",
                       x, y0, y0 + h, y0 + h + 16, number(b));
  }
  for (int i = 0; i <= 5; ++i) {
    const double v = y_max * i / 5, y = py(v);
    svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\" stroke=\"#ddd\"/>"
                       "<text x=\"{3:.1f}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>\n",
                       x0, y, x0 + w, x0 - 6, y + 4, number(v));
  }
  svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">batch size (log2)</text>\n", x0 + w / 2,
                     y0 + h + 36);
  svg += fmt::format("<text transform=\"translate({:.1f},{:.1f}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
                     ox + 16, y0 + h / 2, xml_escape(y_label));
  for (size_t i = 0; i < series.size(); ++i) {
    const char* color = kColors[i % std::size(kColors)];
    std::string pts, marks;
    for (const PlotPoint& p : series[i].points) {
      pts += fmt::format("{}{:.1f},{:.1f}", pts.empty() ? "" : " ", px(p.batch), py(value(p)));
      marks += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.5\" fill=\"{}\"/>", px(p.batch), py(value(p)), color);
    }
    svg += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\" points=\"{}\"/>\n{}\n", color, pts, marks);
  }
  svg += "</g>\n";
}

// Series with only their plottable points, sorted by batch.
std::vector<PlotSeries> clean(const std::vector<PlotSeries>& series) {
  std::vector<PlotSeries> out = series;
  for (PlotSeries& s : out) {
    std::erase_if(s.points, [](const PlotPoint& p) { return p.batch <= 0 || p.items_per_s <= 0 || p.p99_ms <= 0; });
    std::sort(s.points.begin(), s.points.end(), [](const PlotPoint& a, const PlotPoint& b) { return a.batch < b.batch; });
  }
  return out;
}

}  // namespace

std::string xml_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string render_bench_svg(const std::string& title, const std::vector<PlotSeries>& raw) {
  const std::vector<PlotSeries> series = clean(raw);
  Range xr{1e9, -1e9};
  for (const PlotSeries& s : series) {
    for (const PlotPoint& p : s.points) {
      xr.lo = std::min(xr.lo, std::log2(p.batch));
      xr.hi = std::max(xr.hi, std::log2(p.batch));
    }
  }
  if (xr.lo > xr.hi) xr = {0, 1};  // nothing to plot: empty axes
  const double width = 2 * kPanelW, height = kTitleH + kPanelH + kLegendH;
  std::string svg = fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{2}\" y=\"26\" text-anchor=\"middle\" font-size=\"16\" font-weight=\"bold\">{3}</text>\n",
      width, height, width / 2, xml_escape(title));
  draw_panel(svg, 0, kTitleH, "throughput (items/s)", xr, series, [](const PlotPoint& p) { return p.items_per_s; });
  draw_panel(svg, kPanelW, kTitleH, "p99 latency (ms)", xr, series, [](const PlotPoint& p) { return p.p99_ms; });
  // Legend: a coloured swatch and the name of each series, in one row under the panels.
  double x = kLeft;
  const double y = kTitleH + kPanelH + 12;
  svg += "<g class=\"legend\">\n";
  for (size_t i = 0; i < series.size(); ++i) {
    svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"{3}\" stroke-width=\"3\"/>"
                       "<text x=\"{4}\" y=\"{5}\">{6}</text>\n",
                       x, y, x + 24, kColors[i % std::size(kColors)], x + 30, y + 4, xml_escape(series[i].name));
    x += 40 + 8.0 * static_cast<double>(series[i].name.size());
  }
  svg += "</g>\n</svg>\n";
  return svg;
}

}  // namespace kiln::cli
