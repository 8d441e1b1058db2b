#include "training_noise.h"

#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <cmath>

namespace dfmpc::worldmodel {
namespace {

TEST(TrainingNoiseTest, IndependentTimestepsAreCleanWithTheGivenProbability) {
  at::Generator gen = at::detail::createCPUGenerator(1);
  const auto steps = IndependentTimesteps(200, 50, 1000, 0.25, 1.0, gen);
  EXPECT_EQ(steps.min().item<int64_t>(), -1);
  EXPECT_EQ(steps.max().item<int64_t>(), 999);
  // 10000 tokens: the clean fraction is 0.25 +- 4 standard deviations.
  const double clean = (steps < 0).to(torch::kDouble).mean().item<double>();
  EXPECT_NEAR(clean, 0.25, 4 * std::sqrt(0.25 * 0.75 / 10000));
}

// With power 2, P(t < T / 4) = P(v < 1 / 2) = 1 / 2 instead of 1 / 4.
TEST(TrainingNoiseTest, TimestepPowerBiasesTowardLowNoise) {
  at::Generator gen = at::detail::createCPUGenerator(3);
  const auto steps = IndependentTimesteps(200, 50, 1000, 0.0, 2.0, gen);
  EXPECT_GE(steps.min().item<int64_t>(), 0);
  EXPECT_LE(steps.max().item<int64_t>(), 999);
  const double low = (steps < 250).to(torch::kDouble).mean().item<double>();
  EXPECT_NEAR(low, 0.5, 4 * std::sqrt(0.5 * 0.5 / 10000));
}

TEST(TrainingNoiseTest, PyramidTimestepsHaveACleanPrefixThenRise) {
  at::Generator gen = at::detail::createCPUGenerator(2);
  const auto steps = PyramidTimesteps(300, 20, 1000, gen);
  auto a = steps.accessor<int64_t, 2>();
  int with_prefix = 0, rising = 0;
  for (int64_t b = 0; b < steps.size(0); ++b) {
    bool noisy = false;
    for (int64_t t = 0; t < steps.size(1); ++t) {
      ASSERT_GE(a[b][t], -1);
      ASSERT_LE(a[b][t], 999);
      if (a[b][t] >= 0) noisy = true;
      ASSERT_FALSE(noisy && a[b][t] < 0) << "a clean token after a noisy one, window " << b;
      if (t > 0 && a[b][t - 1] >= 0) {
        ASSERT_GE(a[b][t], a[b][t - 1]);
        if (a[b][t] > a[b][t - 1]) ++rising;
      }
    }
    if (a[b][0] < 0) ++with_prefix;
  }
  // Both clean prefixes and rising levels actually occur.
  EXPECT_GT(with_prefix, 200);
  EXPECT_GT(rising, 1000);
}

}  // namespace
}  // namespace dfmpc::worldmodel
