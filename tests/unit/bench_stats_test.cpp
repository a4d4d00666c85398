// Statistics of `kiln bench`: nearest-rank percentiles, summary, throughput.
#include "tools/kiln/bench_stats.h"

#include <gtest/gtest.h>

namespace kiln::cli {
namespace {

TEST(BenchStats, NearestRankPercentiles) {
  const std::vector<double> ten = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  EXPECT_EQ(percentile(ten, 0.0), 1);
  EXPECT_EQ(percentile(ten, 0.5), 5);   // ceil(5) = rank 5
  EXPECT_EQ(percentile(ten, 0.9), 9);   // rank 9
  EXPECT_EQ(percentile(ten, 0.91), 10); // ceil(9.1) = rank 10
  EXPECT_EQ(percentile(ten, 0.99), 10);
  EXPECT_EQ(percentile(ten, 1.0), 10);
  EXPECT_EQ(percentile({7}, 0.5), 7);
  EXPECT_EQ(percentile({7}, 0.99), 7);
  const std::vector<double> three = {1, 2, 3};
  EXPECT_EQ(percentile(three, 0.5), 2);  // ceil(1.5) = rank 2
  // 100 samples: p99 is the 99th, not the maximum.
  std::vector<double> hundred;
  for (int i = 1; i <= 100; ++i) hundred.push_back(i);
  EXPECT_EQ(percentile(hundred, 0.99), 99);
  EXPECT_EQ(percentile(hundred, 0.5), 50);
}

TEST(BenchStats, SummaryOfUnsortedRuns) {
  const RunStats s = summarize_runs({4, 1, 3, 2});
  EXPECT_EQ(s.runs, 4);
  EXPECT_EQ(s.min_ms, 1);
  EXPECT_EQ(s.max_ms, 4);
  EXPECT_EQ(s.p50_ms, 2);
  EXPECT_EQ(s.p99_ms, 4);
  EXPECT_DOUBLE_EQ(s.total_ms, 10);
  EXPECT_DOUBLE_EQ(s.mean_ms, 2.5);
}

TEST(BenchStats, ThroughputIsBatchTimesRunsOverTotalTime) {
  const RunStats s = summarize_runs({2, 2, 4});  // 8 ms for 3 runs
  EXPECT_DOUBLE_EQ(items_per_second(s, 16), 16.0 * 3 * 1000 / 8);
}

TEST(BenchStats, NothingTimed) {
  const RunStats s = summarize_runs({});
  EXPECT_EQ(s.runs, 0);
  EXPECT_EQ(s.p50_ms, 0);
  EXPECT_EQ(items_per_second(s, 8), 0);
}

}  // namespace
}  // namespace kiln::cli
