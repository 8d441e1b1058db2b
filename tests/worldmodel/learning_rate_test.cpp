#include "learning_rate.h"

#include <gtest/gtest.h>

namespace dfmpc::worldmodel {
namespace {

TEST(LearningRateTest, WarmsUpLinearlyToThePeak) {
  EXPECT_DOUBLE_EQ(WarmupCosineLearningRate(0, 100, 10, 1e-3, 0.1), 1e-4);
  EXPECT_DOUBLE_EQ(WarmupCosineLearningRate(4, 100, 10, 1e-3, 0.1), 5e-4);
  EXPECT_DOUBLE_EQ(WarmupCosineLearningRate(10, 100, 10, 1e-3, 0.1), 1e-3);
}

TEST(LearningRateTest, DecaysMonotonicallyTowardTheFloor) {
  double previous = WarmupCosineLearningRate(0, 1000, 0, 2.0, 0.01);
  EXPECT_DOUBLE_EQ(previous, 2.0);
  for (int step = 1; step < 1000; ++step) {
    const double rate = WarmupCosineLearningRate(step, 1000, 0, 2.0, 0.01);
    ASSERT_LT(rate, previous) << "step " << step;
    previous = rate;
  }
  // Half way the cosine is at the mean of peak and floor; the last step is
  // within one step's decrement of the floor.
  EXPECT_NEAR(WarmupCosineLearningRate(500, 1000, 0, 2.0, 0.01), 0.5 * (2.0 + 0.02), 1e-12);
  EXPECT_NEAR(previous, 0.02, 1e-4);
}

}  // namespace
}  // namespace dfmpc::worldmodel
