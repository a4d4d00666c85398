#include "runtime/memory_plan.h"

#include <gtest/gtest.h>

#include <random>

namespace kiln::runtime {
namespace {

// The one property every plan must have: tensors alive at the same time never share bytes
// (unless one aliases the other in place).
void expect_valid(const std::vector<PlanTensor>& ts, const MemoryPlan& p, size_t alignment = 256) {
  ASSERT_EQ(p.offsets.size(), ts.size());
  for (size_t i = 0; i < ts.size(); ++i) {
    EXPECT_EQ(p.offsets[i] % alignment, 0u) << ts[i].name;
    EXPECT_LE(p.offsets[i] + ts[i].bytes, p.arena_bytes) << ts[i].name;
    for (size_t j = i + 1; j < ts.size(); ++j) {
      if (p.aliased[j] || p.aliased[i]) continue;
      const bool live_together = ts[i].first <= ts[j].last && ts[j].first <= ts[i].last;
      const bool share = p.offsets[i] < p.offsets[j] + ts[j].bytes && p.offsets[j] < p.offsets[i] + ts[i].bytes;
      EXPECT_FALSE(live_together && share) << ts[i].name << " and " << ts[j].name << " overlap";
    }
  }
}

TEST(MemoryPlan, ChainReusesMemory) {
  // a -> b -> c -> d: at most two tensors are alive at once.
  std::vector<PlanTensor> ts = {{"a", 1000, 0, 1}, {"b", 1000, 1, 2}, {"c", 1000, 2, 3}, {"d", 1000, 3, 4}};
  const MemoryPlan p = plan_memory(ts);
  expect_valid(ts, p);
  EXPECT_EQ(p.arena_bytes, 2 * 1024u);
  EXPECT_EQ(p.total_bytes, 4000u);
  EXPECT_EQ(p.offsets[0], p.offsets[2]);
  EXPECT_EQ(p.offsets[1], p.offsets[3]);
}

TEST(MemoryPlan, OverlappingLifetimesGetDisjointBytes) {
  std::vector<PlanTensor> ts = {{"x", 100, 0, 5}, {"y", 300, 0, 5}, {"z", 50, 2, 3}};
  const MemoryPlan p = plan_memory(ts);
  expect_valid(ts, p);
  EXPECT_EQ(p.arena_bytes, 3 * 256u + 256u);  // 300 rounds up to 512
}

TEST(MemoryPlan, BestFitPicksTheSmallestGap) {
  // Placed largest first: a, hole4k, b, then hole1k, c. While `small` lives only a, b and c
  // do, leaving a 4 KiB gap (hole4k's bytes) and a 1 KiB gap (hole1k's): best fit takes the 1 KiB one.
  std::vector<PlanTensor> ts = {{"a", 4096, 0, 9}, {"hole4k", 4096, 0, 1}, {"b", 4096, 0, 9},
                                {"hole1k", 1024, 0, 1}, {"c", 1024, 0, 9}, {"small", 1000, 2, 3}};
  const MemoryPlan p = plan_memory(ts);
  expect_valid(ts, p);
  EXPECT_EQ(p.offsets[5], p.offsets[3]) << p.to_string(ts);
  EXPECT_EQ(p.arena_bytes, 4096u * 3 + 1024 * 2);
}

TEST(MemoryPlan, AliasIsHonouredOnlyWhenTheSourceIsDead) {
  std::vector<PlanTensor> ts = {{"x", 1024, 0, 1}, {"relu", 1024, 1, 2, 0}, {"y", 1024, 0, 3},
                                {"add", 1024, 2, 4, 2}};
  const MemoryPlan p = plan_memory(ts);
  expect_valid(ts, p);
  EXPECT_TRUE(p.aliased[1]);
  EXPECT_EQ(p.offsets[1], p.offsets[0]);
  EXPECT_FALSE(p.aliased[3]) << "y is still read at step 3, after add is written at step 2";
  EXPECT_NE(p.offsets[3], p.offsets[2]);
}

TEST(MemoryPlan, AliasLargerThanSourceIsRefused) {
  std::vector<PlanTensor> ts = {{"x", 256, 0, 1}, {"big", 4096, 1, 2, 0}};
  const MemoryPlan p = plan_memory(ts);
  EXPECT_FALSE(p.aliased[1]);
  expect_valid(ts, p);
}

TEST(MemoryPlan, RandomPlansAreValidAndDeterministic) {
  std::mt19937 rng(7);
  for (int round = 0; round < 20; ++round) {
    std::vector<PlanTensor> ts;
    for (int i = 0; i < 60; ++i) {
      const int first = static_cast<int>(rng() % 40);
      const int last = first + static_cast<int>(rng() % 10);
      ts.push_back({"t" + std::to_string(i), 1 + rng() % 100000, first, last});
    }
    const MemoryPlan p = plan_memory(ts);
    expect_valid(ts, p);
    EXPECT_LE(p.arena_bytes, p.total_bytes + ts.size() * 256);
    EXPECT_EQ(plan_memory(ts).offsets, p.offsets);
  }
}

TEST(MemoryPlan, PrintsSizesAndOneLinePerTensor) {
  std::vector<PlanTensor> ts = {{"in", 1024, 0, 1}, {"out", 1024, 1, 2, 0}};
  const std::string s = plan_memory(ts).to_string(ts);
  EXPECT_NE(s.find("arena 0.001 MiB for 2 tensors"), std::string::npos) << s;
  EXPECT_NE(s.find("out (in place of 'in')"), std::string::npos) << s;
}

}  // namespace
}  // namespace kiln::runtime
