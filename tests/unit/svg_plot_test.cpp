// The `kiln bench --plot` SVG: well-formed XML, one polyline per series in each panel.
#include "tools/kiln/svg_plot.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kiln::cli {
namespace {

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

// A minimal XML well-formedness check: every tag closes in order, attributes are quoted, no
// bare '&' or '<' in text.
bool well_formed(const std::string& xml, std::string* why) {
  std::vector<std::string> open;
  size_t i = 0;
  if (xml.rfind("<?xml", 0) == 0) i = xml.find("?>") + 2;
  while (i < xml.size()) {
    if (xml[i] == '&') {
      const size_t semi = xml.find(';', i);
      const std::string entity = xml.substr(i, semi == std::string::npos ? 0 : semi - i + 1);
      if (entity != "&amp;" && entity != "&lt;" && entity != "&gt;" && entity != "&quot;") {
        *why = "bare & at " + std::to_string(i);
        return false;
      }
    }
    if (xml[i] != '<') {
      ++i;
      continue;
    }
    const size_t end = xml.find('>', i);
    if (end == std::string::npos) return *why = "unclosed tag", false;
    std::string tag = xml.substr(i + 1, end - i - 1);
    if (count(tag, "\"") % 2 != 0 || tag.find('<') != std::string::npos) return *why = "bad tag: " + tag, false;
    const bool closing = tag[0] == '/', self = tag.back() == '/';
    std::string name = tag.substr(closing ? 1 : 0);
    name = name.substr(0, name.find_first_of(" /\n"));
    if (closing) {
      if (open.empty() || open.back() != name) return *why = "mismatched </" + name + ">", false;
      open.pop_back();
    } else if (!self) {
      open.push_back(name);
    }
    i = end + 1;
  }
  if (!open.empty()) return *why = "unclosed <" + open.back() + ">", false;
  return true;
}

std::vector<PlotSeries> three_precisions() {
  std::vector<PlotSeries> s;
  for (const char* name : {"fp32", "fp16", "bf16"}) {
    PlotSeries series{name, {}};
    for (double b : {256.0, 1.0, 8.0, 32.0}) series.points.push_back({b, b * 100, 1 + b / 10});
    s.push_back(series);
  }
  return s;
}

TEST(SvgPlot, WellFormedWithOnePolylinePerPrecisionPerPanel) {
  const std::string svg = render_bench_svg("ResNet-50 <H200> & more", three_precisions());
  std::string why;
  EXPECT_TRUE(well_formed(svg, &why)) << why;
  EXPECT_EQ(count(svg, "<svg "), 1u);
  EXPECT_EQ(count(svg, "<polyline "), 2u * 3u);  // throughput and p99 panels
  EXPECT_EQ(count(svg, "<circle "), 2u * 3u * 4u);
  EXPECT_NE(svg.find("ResNet-50 &lt;H200&gt; &amp; more"), std::string::npos);
  EXPECT_NE(svg.find("throughput (items/s)"), std::string::npos);
  EXPECT_NE(svg.find("p99 latency (ms)"), std::string::npos);
  for (const char* name : {">fp32<", ">fp16<", ">bf16<"}) EXPECT_EQ(count(svg, name), 1u) << name;  // legend
  for (const char* tick : {">1<", ">8<", ">32<", ">256<"}) EXPECT_GE(count(svg, tick), 2u) << tick;  // x ticks
}

TEST(SvgPlot, PointsSortedByBatchSoLinesGoLeftToRight) {
  const std::string svg = render_bench_svg("t", {three_precisions()[0]});
  const size_t at = svg.find("points=\"");
  ASSERT_NE(at, std::string::npos);
  std::string pts = svg.substr(at + 8, svg.find('"', at + 8) - at - 8);
  double last_x = -1;
  for (size_t pos = 0; pos < pts.size();) {
    const double x = std::stod(pts.substr(pos));
    EXPECT_GT(x, last_x);
    last_x = x;
    pos = pts.find(' ', pos);
    pos = pos == std::string::npos ? pts.size() : pos + 1;
  }
}

TEST(SvgPlot, EmptyAndSinglePointStillWellFormed) {
  std::string why;
  EXPECT_TRUE(well_formed(render_bench_svg("none", {}), &why)) << why;
  const std::string one = render_bench_svg("one", {{"fp16", {{1, 500, 2}}}});
  EXPECT_TRUE(well_formed(one, &why)) << why;
  EXPECT_EQ(count(one, "<polyline "), 2u);
  EXPECT_EQ(one.find("nan"), std::string::npos);
  EXPECT_EQ(one.find("inf"), std::string::npos);
}

}  // namespace
}  // namespace kiln::cli
