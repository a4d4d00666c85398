// Plan files on the GPU: a built plan loads without timing (its tactics come from the plan),
// gives the same outputs as the model it was built from, a rebuild takes every tactic from the
// timing cache, and a plan built for another GPU architecture or library version is refused
// with a message that says what differs and how to rebuild.
#include <gtest/gtest.h>

#include <filesystem>

#include "gpu_test_util.h"
#include "runtime/plan_file.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

BuildOptions fp16_build(const std::string& cache) {
  BuildOptions b;
  b.session.backend = "cuda";
  b.session.precision = "fp16";
  b.session.timing_cache_path = cache;
  b.profile_specs = {"x:1,2,4"};
  return b;
}

TEST(GpuPlanFile, BuildLoadRunAndRebuildFromTheCache) {
  KILN_SKIP_WITHOUT_GPU();
  const std::string model = testing::write_text_model(testing::small_cnn(), "gpu_plan_cnn");
  const std::string plan = (fs::temp_directory_path() / "kiln_gpu_plan_cnn.plan").string();
  const std::string cache = (fs::temp_directory_path() / "kiln_gpu_plan_cache.json").string();
  fs::remove(cache);
  BuildReport first, second;
  ASSERT_TRUE(build_plan(model, plan, fp16_build(cache), &first).ok());
  EXPECT_EQ(first.shape_sets, 3);
  EXPECT_GT(first.tactics_timed, 0);
  ASSERT_TRUE(build_plan(model, plan, fp16_build(cache), &second).ok());
  EXPECT_EQ(second.tactics_timed, 0) << "every tactic of the rebuild comes from the timing cache";
  EXPECT_GT(second.tactics_from_cache, 0);

  // The plan and the model at the same precision compute the same thing (same optimized graph;
  // tactics may differ between the two loads, so fp16 tolerance: see conv_test.cpp).
  const std::map<std::string, Tensor> in = {{"x", testing::random_tensor(DType::kFloat32, {2, 3, 16, 16}, 3)}};
  SessionOptions o;
  o.backend = "cuda";
  o.precision = "fp16";
  o.timing_cache_path = "none";
  const std::vector<Tensor> from_model = testing::run_session(model, o, in);
  const std::vector<Tensor> from_plan = testing::run_session(plan, o, in);
  ASSERT_EQ(from_plan.size(), 1u);
  ASSERT_EQ(from_model.size(), 1u);
  testing::expect_close(from_plan[0], from_model[0], 2e-2, 2e-3, "plan vs model");

  std::string text;
  ASSERT_TRUE(describe_plan(plan, &text).ok());
  EXPECT_NE(text.find("arena"), std::string::npos) << text;
}

TEST(GpuPlanFile, OtherArchitectureOrCudnnIsRefused) {
  KILN_SKIP_WITHOUT_GPU();
  const std::string model = testing::write_text_model(testing::small_cnn(), "gpu_plan_env");
  const std::string plan = (fs::temp_directory_path() / "kiln_gpu_plan_env.plan").string();
  BuildReport report;
  ASSERT_TRUE(build_plan(model, plan, fp16_build("none"), &report).ok());
  runtime::PlanFile file;
  ASSERT_TRUE(runtime::read_plan_file(plan, &file).ok());
  const nlohmann::json env = file.header["environment"];

  auto load_with = [&](const std::string& key, const nlohmann::json& value) {
    runtime::PlanFile edited = file;
    edited.header["environment"] = env;
    edited.header["environment"][key] = value;
    const std::string path = plan + "." + key;
    EXPECT_TRUE(runtime::write_plan_file(path, edited).ok());
    SessionOptions o;
    o.backend = "cuda";
    std::unique_ptr<Session> s;
    return Session::load(path, o, &s);
  };
  const Status arch = load_with("sm", env["sm"].get<int>() == 80 ? 90 : 80);
  EXPECT_FALSE(arch.ok());
  EXPECT_NE(arch.message().find("was built for sm_"), std::string::npos) << arch.to_string();
  EXPECT_NE(arch.message().find("kiln build"), std::string::npos) << arch.to_string();
  const Status cudnn = load_with("cudnn", "8.0.0");
  EXPECT_FALSE(cudnn.ok());
  EXPECT_NE(cudnn.message().find("cudnn 8.0.0"), std::string::npos) << cudnn.to_string();
}

}  // namespace
}  // namespace kiln
