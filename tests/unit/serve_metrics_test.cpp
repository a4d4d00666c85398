// Metrics' Prometheus text: parsed back line by line (as a scraper would) and checked for the
// families, types, label sets, cumulative buckets and values the serving spec lists.
#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "serve/metrics.h"

namespace kiln::serve {
namespace {

struct Scrape {
  std::map<std::string, std::string> types;    // family -> counter/gauge/histogram
  std::map<std::string, double> samples;       // "name{labels}" -> value
  std::vector<std::string> bad_lines;          // lines that are not valid 0.0.4 text
};

// A deliberately strict reading of the text format: comments are HELP/TYPE, every sample is
// `name{labels} value` or `name value`, and every sample's family has a TYPE before it.
Scrape parse(const std::string& text) {
  Scrape s;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("# HELP ", 0) == 0) continue;
    if (line.rfind("# TYPE ", 0) == 0) {
      std::istringstream t(line.substr(7));
      std::string name, type;
      t >> name >> type;
      s.types[name] = type;
      continue;
    }
    const size_t space = line.rfind(' ');
    if (space == std::string::npos) {
      s.bad_lines.push_back(line);
      continue;
    }
    const std::string key = line.substr(0, space);
    const std::string name = key.substr(0, key.find('{'));
    bool typed = s.types.count(name) > 0;
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      const std::string sfx = suffix;
      if (name.size() > sfx.size() && name.compare(name.size() - sfx.size(), sfx.size(), sfx) == 0) {
        auto it = s.types.find(name.substr(0, name.size() - sfx.size()));
        typed = typed || (it != s.types.end() && it->second == "histogram");
      }
    }
    try {
      size_t used = 0;
      const double v = std::stod(line.substr(space + 1), &used);
      if (!typed || used != line.size() - space - 1) s.bad_lines.push_back(line);
      s.samples[key] = v;
    } catch (...) {
      s.bad_lines.push_back(line);
    }
  }
  return s;
}

TEST(ServeMetrics, EmptyHasEveryFamilyTyped) {
  Metrics m;
  const Scrape s = parse(m.prometheus_text());
  EXPECT_TRUE(s.bad_lines.empty());
  EXPECT_EQ(s.types.at("kiln_requests_total"), "counter");
  EXPECT_EQ(s.types.at("kiln_request_failures_total"), "counter");
  EXPECT_EQ(s.types.at("kiln_queue_seconds"), "histogram");
  EXPECT_EQ(s.types.at("kiln_compute_seconds"), "histogram");
  EXPECT_EQ(s.types.at("kiln_request_seconds"), "histogram");
  EXPECT_EQ(s.types.at("kiln_batch_size"), "histogram");
  EXPECT_EQ(s.types.at("kiln_queue_depth"), "gauge");
  EXPECT_EQ(s.types.at("kiln_in_flight"), "gauge");
  EXPECT_EQ(s.types.at("kiln_throughput"), "gauge");
  EXPECT_EQ(s.types.at("kiln_device_memory_bytes"), "gauge");
  EXPECT_TRUE(s.samples.empty());
}

TEST(ServeMetrics, RequestsFailuresAndLatencyHistograms) {
  Metrics m;
  m.record_request("net", 200, 0.0002, 0.003, 0.004);
  m.record_request("net", 200, 0.0004, 0.02, 0.03);
  m.record_request("net", 503, 0, 0, 0.00001);
  m.record_request("other", 400, 0, 0, 0.00002);
  const Scrape s = parse(m.prometheus_text());
  ASSERT_TRUE(s.bad_lines.empty()) << s.bad_lines.front();

  EXPECT_EQ(s.samples.at("kiln_requests_total{model=\"net\",status=\"200\"}"), 2);
  EXPECT_EQ(s.samples.at("kiln_requests_total{model=\"net\",status=\"503\"}"), 1);
  EXPECT_EQ(s.samples.at("kiln_requests_total{model=\"other\",status=\"400\"}"), 1);
  EXPECT_EQ(s.samples.count("kiln_request_failures_total{model=\"net\",status=\"200\"}"), 0u);
  EXPECT_EQ(s.samples.at("kiln_request_failures_total{model=\"net\",status=\"503\"}"), 1);
  EXPECT_EQ(s.samples.at("kiln_request_failures_total{model=\"other\",status=\"400\"}"), 1);

  // Queue and compute count the served requests only; end to end counts all three.
  EXPECT_EQ(s.samples.at("kiln_queue_seconds_count{model=\"net\"}"), 2);
  EXPECT_EQ(s.samples.at("kiln_compute_seconds_count{model=\"net\"}"), 2);
  EXPECT_EQ(s.samples.at("kiln_request_seconds_count{model=\"net\"}"), 3);
  EXPECT_NEAR(s.samples.at("kiln_compute_seconds_sum{model=\"net\"}"), 0.023, 1e-12);
  // Buckets are cumulative: 0.0002 <= 0.00025, 0.0004 <= 0.0005.
  EXPECT_EQ(s.samples.at("kiln_queue_seconds_bucket{model=\"net\",le=\"0.0001\"}"), 0);
  EXPECT_EQ(s.samples.at("kiln_queue_seconds_bucket{model=\"net\",le=\"0.00025\"}"), 1);
  EXPECT_EQ(s.samples.at("kiln_queue_seconds_bucket{model=\"net\",le=\"0.0005\"}"), 2);
  EXPECT_EQ(s.samples.at("kiln_queue_seconds_bucket{model=\"net\",le=\"10\"}"), 2);
  EXPECT_EQ(s.samples.at("kiln_queue_seconds_bucket{model=\"net\",le=\"+Inf\"}"), 2);
  EXPECT_EQ(s.samples.at("kiln_request_seconds_bucket{model=\"net\",le=\"0.005\"}"), 2);
}

TEST(ServeMetrics, BatchesGaugesAndDeviceMemory) {
  Metrics m;
  m.record_batch("net", 1);
  m.record_batch("net", 3);
  m.record_batch("net", 8);
  m.record_batch("net", 1000);  // beyond the last bound: only in +Inf
  m.set_queue_depth("net", 5);
  m.set_queue_depth("net", 2);
  m.add_in_flight("net", 3);
  m.add_in_flight("net", -1);
  m.set_device_memory(0, 1 << 20);
  m.set_device_memory(1, 4096);
  const Scrape s = parse(m.prometheus_text());
  ASSERT_TRUE(s.bad_lines.empty()) << s.bad_lines.front();
  EXPECT_EQ(s.samples.at("kiln_batch_size_bucket{model=\"net\",le=\"1\"}"), 1);
  EXPECT_EQ(s.samples.at("kiln_batch_size_bucket{model=\"net\",le=\"2\"}"), 1);
  EXPECT_EQ(s.samples.at("kiln_batch_size_bucket{model=\"net\",le=\"4\"}"), 2);
  EXPECT_EQ(s.samples.at("kiln_batch_size_bucket{model=\"net\",le=\"8\"}"), 3);
  EXPECT_EQ(s.samples.at("kiln_batch_size_bucket{model=\"net\",le=\"256\"}"), 3);
  EXPECT_EQ(s.samples.at("kiln_batch_size_bucket{model=\"net\",le=\"+Inf\"}"), 4);
  EXPECT_EQ(s.samples.at("kiln_batch_size_sum{model=\"net\"}"), 1012);
  EXPECT_EQ(s.samples.at("kiln_queue_depth{model=\"net\"}"), 2);
  EXPECT_EQ(s.samples.at("kiln_in_flight{model=\"net\"}"), 2);
  EXPECT_EQ(s.samples.at("kiln_device_memory_bytes{device=\"0\"}"), 1 << 20);
  EXPECT_EQ(s.samples.at("kiln_device_memory_bytes{device=\"1\"}"), 4096);
}

TEST(ServeMetrics, ThroughputCountsRecentRequests) {
  Metrics m;
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  for (int i = 0; i < 50; ++i) m.record_request("net", 200, 0, 0, 0);
  const double rps = parse(m.prometheus_text()).samples.at("kiln_throughput{model=\"net\"}");
  // 50 requests within the first ~0.1 s of the window: between 50/10 s and 50/0.1 s.
  EXPECT_GT(rps, 5.0);
  EXPECT_LE(rps, 500.0 + 1e-9);
}

TEST(ServeMetrics, LabelValuesAreEscaped) {
  Metrics m;
  m.set_queue_depth("a\"b\\c\nd", 1);
  const std::string text = m.prometheus_text();
  EXPECT_NE(text.find("kiln_queue_depth{model=\"a\\\"b\\\\c\\nd\"} 1\n"), std::string::npos) << text;
}

TEST(ServeMetrics, ConcurrentUpdatesAreAllCounted) {
  Metrics m;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&m] {
      for (int i = 0; i < 1000; ++i) {
        m.add_in_flight("net", 1);
        m.record_request("net", 200, 0.001, 0.001, 0.002);
        m.record_batch("net", 2);
        m.add_in_flight("net", -1);
      }
    });
  }
  for (auto& th : threads) th.join();
  const Scrape s = parse(m.prometheus_text());
  EXPECT_EQ(s.samples.at("kiln_requests_total{model=\"net\",status=\"200\"}"), 8000);
  EXPECT_EQ(s.samples.at("kiln_batch_size_count{model=\"net\"}"), 8000);
  EXPECT_EQ(s.samples.at("kiln_in_flight{model=\"net\"}"), 0);
}

}  // namespace
}  // namespace kiln::serve
