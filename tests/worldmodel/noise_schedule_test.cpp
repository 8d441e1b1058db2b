#include "dfmpc/worldmodel/noise_schedule.h"

#include <gtest/gtest.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <cmath>
#include <stdexcept>
#include <string>

namespace dfmpc::worldmodel {
namespace {

TEST(NoiseScheduleTest, AlphaBarIsOneWhenCleanAndDecreasesToNearZero) {
  for (auto beta : {BetaSchedule::kLinear, BetaSchedule::kCosine}) {
    const NoiseSchedule schedule(1000, beta);
    EXPECT_EQ(schedule.AlphaBar(-1), 1.0);
    for (int t = 0; t < 1000; ++t) EXPECT_LT(schedule.AlphaBar(t), schedule.AlphaBar(t - 1));
    EXPECT_LT(schedule.AlphaBar(999), 1e-3);
    EXPECT_THROW(schedule.AlphaBar(1000), std::out_of_range);
  }
}

TEST(NoiseScheduleTest, LinearMatchesClosedFormProduct) {
  const NoiseSchedule schedule(1000, BetaSchedule::kLinear);
  // beta_0 = 1e-4, beta_1 = 1e-4 + (0.02 - 1e-4) / 999.
  const double beta1 = 1e-4 + (0.02 - 1e-4) / 999.0;
  EXPECT_NEAR(schedule.AlphaBar(1), (1 - 1e-4) * (1 - beta1), 1e-15);
}

TEST(NoiseScheduleTest, LevelsMapLikeTheReference) {
  const NoiseSchedule schedule(1000);
  // floor(-1 + k * 1000 / 16) for k = 0, 1, 8, 16.
  EXPECT_EQ(schedule.LevelTimestep(0, 16), -1);
  EXPECT_EQ(schedule.LevelTimestep(1, 16), 61);
  EXPECT_EQ(schedule.LevelTimestep(8, 16), 499);
  EXPECT_EQ(schedule.LevelTimestep(16, 16), 999);
  EXPECT_THROW(schedule.LevelTimestep(17, 16), std::out_of_range);
  EXPECT_THROW(schedule.LevelTimestep(-1, 16), std::out_of_range);
}

TEST(NoiseScheduleTest, EveryNoisyLevelMapsToANoisyTimestepUpToKEqualsT) {
  const NoiseSchedule schedule(10);
  // K = T: level k is timestep k - 1, so only level 0 is clean.
  for (int k = 1; k <= 10; ++k) EXPECT_EQ(schedule.LevelTimestep(k, 10), k - 1);
  // K = T + 1 would map level 1 to floor(-1 + 10 / 11) = -1, clean.
  try {
    schedule.LevelTimestep(1, 11);
    ADD_FAILURE() << "K = 11 > T = 10 was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("K = 11"), std::string::npos) << e.what();
  }
}

TEST(NoiseScheduleTest, ConversionsRecoverCleanAndNoise) {
  torch::manual_seed(0);
  const auto x0 = torch::randn({4, 3});
  const auto eps = torch::randn({4, 3});
  const auto ab = torch::tensor({0.9, 0.5, 0.1, 0.01}).view({4, 1}).to(torch::kFloat);
  const auto x_t = NoiseSchedule::AddNoise(x0, eps, ab);
  for (auto kind : {Prediction::kV, Prediction::kX0, Prediction::kEps}) {
    at::Tensor x0_hat, eps_hat;
    NoiseSchedule::ToX0AndEps(kind, x_t, NoiseSchedule::Target(kind, x0, eps, ab), ab, &x0_hat,
                              &eps_hat);
    EXPECT_TRUE(torch::allclose(x0_hat, x0, 1e-4, 1e-4)) << PredictionName(kind);
    EXPECT_TRUE(torch::allclose(eps_hat, eps, 1e-4, 1e-4)) << PredictionName(kind);
  }
}

TEST(NoiseScheduleTest, DeterministicDdimStepLandsOnTheForwardMarginal) {
  torch::manual_seed(1);
  const auto x0 = torch::randn({5});
  const auto eps = torch::randn({5});
  const auto from = torch::full({1}, 0.3f);
  const auto to = torch::full({1}, 0.8f);
  // With exact x0 and eps, eta = 0 gives sqrt(ab_to) x0 + sqrt(1 - ab_to) eps.
  const auto stepped = NoiseSchedule::DdimStep(x0, eps, from, to, 0.0, at::Tensor());
  EXPECT_TRUE(torch::allclose(stepped, NoiseSchedule::AddNoise(x0, eps, to)));
  // To alpha-bar 1 (clean) the step returns x0, with or without eta.
  const auto noise = torch::randn({5});
  const auto clean = NoiseSchedule::DdimStep(x0, eps, from, torch::ones({1}), 1.0, noise);
  EXPECT_TRUE(torch::allclose(clean, x0));
  // eta > 0 mixes in the given noise.
  const auto stochastic = NoiseSchedule::DdimStep(x0, eps, from, to, 1.0, noise);
  EXPECT_FALSE(torch::allclose(stochastic, stepped));
}

TEST(NoiseScheduleTest, ParsesNames) {
  EXPECT_EQ(ParsePrediction("eps"), Prediction::kEps);
  EXPECT_THROW(ParsePrediction("score"), std::invalid_argument);
  EXPECT_THROW(ParseBetaSchedule("sigmoid"), std::invalid_argument);
  EXPECT_THROW(NoiseSchedule(0), std::invalid_argument);
}

}  // namespace
}  // namespace dfmpc::worldmodel
