// The timing cache (src/runtime/tactic_cache.h): keys carry the environment, entries survive a
// save and load, a corrupt file is an error naming it, and --timing-cache values map to files.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "runtime/tactic_cache.h"

namespace kiln::runtime {
namespace {

namespace fs = std::filesystem;

TEST(TacticCache, EnvironmentIsPartOfTheKey) {
  TacticCache h200("H200 sm_90 cudnn 9.14");
  h200.put("conv 3x3", "algo=1");
  EXPECT_EQ(h200.find("conv 3x3").value_or(""), "algo=1");
  TacticCache a100("A100 sm_80 cudnn 9.14");
  a100.merge(h200.all());
  EXPECT_FALSE(a100.find("conv 3x3").has_value()) << "another GPU's winner must not match";
  EXPECT_EQ(a100.misses(), 1);
  EXPECT_EQ(h200.hits(), 1);
  EXPECT_EQ(h200.size(), 1u);
}

TEST(TacticCache, SaveLoadRoundTripAndUsedEntries) {
  const std::string path = (fs::temp_directory_path() / "kiln_tc_test" / "cache.json").string();
  fs::remove_all(fs::path(path).parent_path());
  TacticCache a("env");
  a.put("k1", "v1");
  a.put("k2", "v2");
  ASSERT_TRUE(a.save(path).ok());
  TacticCache b("env");
  ASSERT_TRUE(b.load(path).ok());
  EXPECT_EQ(b.size(), 2u);
  EXPECT_TRUE(b.used().empty());
  EXPECT_EQ(b.find("k2").value_or(""), "v2");
  EXPECT_EQ(b.used().size(), 1u) << "a plan stores only the entries it used";
  TacticCache missing("env");
  EXPECT_TRUE(missing.load(path + ".absent").ok()) << "no file yet: an empty cache";
}

TEST(TacticCache, CorruptFileIsAnErrorNamingIt) {
  const std::string path = (fs::temp_directory_path() / "kiln_tc_corrupt.json").string();
  std::ofstream(path) << "{not json";
  TacticCache c("env");
  const Status st = c.load(path);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find(path), std::string::npos) << st.to_string();
}

TEST(TacticCache, PathForOption) {
  EXPECT_EQ(TacticCache::path_for("none"), "");
  EXPECT_EQ(TacticCache::path_for("/tmp/x.json"), "/tmp/x.json");
  EXPECT_EQ(TacticCache::path_for(""), TacticCache::default_path());
}

}  // namespace
}  // namespace kiln::runtime
