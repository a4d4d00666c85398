#include <kiln/doctor.h>

#include "gpu_test_util.h"

namespace kiln {
namespace {

TEST(GpuDoctor, ReportMatchesTheMachine) {
  const DoctorReport r = run_doctor();
  EXPECT_TRUE(r.cuda_built);
  EXPECT_FALSE(r.cudnn_built.empty());
  const std::string text = format_doctor_report(r);
  if (!testing::gpu_present()) {
    EXPECT_TRUE(r.gpus.empty());
    EXPECT_FALSE(r.gpu_usable());
    EXPECT_NE(text.find("GPUs: none"), std::string::npos) << text;
    return;
  }
  ASSERT_FALSE(r.gpus.empty());
  EXPECT_GE(r.gpus[0].sm, 80) << text;
  EXPECT_TRUE(r.gpu_usable()) << text;
  std::printf("%s", text.c_str());
}

}  // namespace
}  // namespace kiln
