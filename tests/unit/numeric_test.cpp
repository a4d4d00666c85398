#include <gtest/gtest.h>

#include <cmath>

#include "core/numeric.h"

namespace kiln {
namespace {

TEST(Float16, RoundTripsExactValues) {
  for (float f : {0.0f, 1.0f, -2.5f, 65504.0f, 6.103515625e-05f, 5.960464477539063e-08f}) {
    EXPECT_EQ(static_cast<float>(float16(f)), f) << f;
  }
}

TEST(Float16, RoundsToNearestEvenAndOverflowsToInf) {
  EXPECT_EQ(float16(1.0f + 1.0f / 2048).bits, float16(1.0f).bits);  // tie to even
  EXPECT_EQ(float16(1.0f + 3.0f / 2048).bits, float16(1.0f + 2.0f / 1024).bits);
  EXPECT_TRUE(std::isinf(static_cast<float>(float16(70000.0f))));
  EXPECT_TRUE(std::isnan(static_cast<float>(float16(NAN))));
}

TEST(BFloat16, KeepsFloatExponentRange) {
  EXPECT_EQ(static_cast<float>(bfloat16(1e30f)), bfloat16::to_float(bfloat16::from_float(1e30f)));
  EXPECT_NEAR(static_cast<float>(bfloat16(3.14159f)), 3.140625f, 1e-6);
}

TEST(Float8E4M3FN, SaturatesOrGivesNaN) {
  EXPECT_EQ(static_cast<float>(float8e4m3fn(448.0f)), 448.0f);
  EXPECT_EQ(static_cast<float>(float8e4m3fn(1000.0f)), 448.0f);
  EXPECT_TRUE(std::isnan(static_cast<float>(float8e4m3fn(1000.0f, /*saturate=*/false))));
  EXPECT_EQ(static_cast<float>(float8e4m3fn(-INFINITY)), -448.0f);
  EXPECT_EQ(static_cast<float>(float8e4m3fn(0.001953125f)), 0.001953125f);  // smallest subnormal
}

TEST(Float8E5M2, HasInfinities) {
  EXPECT_EQ(static_cast<float>(float8e5m2(57344.0f)), 57344.0f);
  EXPECT_EQ(static_cast<float>(float8e5m2(1e6f)), 57344.0f);
  EXPECT_TRUE(std::isinf(static_cast<float>(float8e5m2(1e6f, /*saturate=*/false))));
  EXPECT_TRUE(std::isinf(static_cast<float>(float8e5m2(INFINITY, false))));
}

}  // namespace
}  // namespace kiln
