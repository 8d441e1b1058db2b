#include "dfmpc/worldmodel/sensor_noise.h"

#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <cmath>
#include <limits>
#include <stdexcept>

#include "dfmpc/worldmodel/tokens.h"

namespace dfmpc::worldmodel {
namespace {

constexpr int kObservationDim = 3;
constexpr int kLength = 12;

TokenLayout DeltaLayout() { return {1, kObservationDim, true}; }

// Normalization statistics of the shape training produces: changes far
// smaller than the observations they come from.
Normalizer Statistics(const TokenLayout& layout) {
  at::Tensor mean = torch::linspace(-0.2, 0.3, layout.token_dim());
  at::Tensor scale = torch::full({layout.token_dim()}, 0.8);
  if (layout.observation_deltas) {
    scale.narrow(0, layout.delta_offset(), kObservationDim).fill_(0.05);
  }
  return Normalizer(mean, scale);
}

// The corruption is what rebuilding the tokens from noisy observations
// gives: recover the noise n_t from the observation features, then build the
// window from observations + n and compare every feature.
TEST(SensorNoiseTest, EqualsTokensRebuiltFromNoisyObservations) {
  const TokenLayout layout = DeltaLayout();
  const Normalizer normalizer = Statistics(layout);
  torch::manual_seed(0);
  const at::Tensor observations = torch::randn({kLength + 1, kObservationDim}, at::kDouble);
  const at::Tensor actions = torch::rand({kLength, 1}, at::kDouble) * 2 - 1;
  const at::Tensor tokens = normalizer.Normalize(EpisodeTokens(layout, observations, actions));
  const at::Tensor window = tokens.narrow(0, 1, kLength).unsqueeze(0);  // o_0 comes before

  const SensorNoise noise = MakeSensorNoise(layout, normalizer, 0.1);
  at::Generator gen = at::detail::createCPUGenerator(5);
  const at::Tensor noisy = AddSensorNoise(noise, window, torch::tensor({0.05}), gen)[0];

  const at::Tensor scale = normalizer.scale().to(at::kDouble);
  const at::Tensor difference = (noisy - window[0]).to(at::kDouble);
  const at::Tensor n = difference.narrow(1, layout.observation_offset(), kObservationDim) *
                       scale.narrow(0, layout.observation_offset(), kObservationDim);
  const at::Tensor first_change = difference[0].narrow(0, layout.delta_offset(), kObservationDim) *
                                  scale.narrow(0, layout.delta_offset(), kObservationDim);
  const at::Tensor n0 = n[0] - first_change;
  const at::Tensor noisy_observations = observations + at::cat({n0.unsqueeze(0), n}, 0);
  const at::Tensor rebuilt =
      normalizer.Normalize(EpisodeTokens(layout, noisy_observations, actions))
          .narrow(0, 1, kLength);
  EXPECT_TRUE(torch::allclose(noisy, rebuilt, 1e-4, 1e-4))
      << (noisy - rebuilt).abs().max().item<double>();
  EXPECT_TRUE(torch::equal(noisy.narrow(1, 0, 1), window[0].narrow(1, 0, 1)))
      << "actions are commanded, not sensed: they must stay exact";
  EXPECT_GT(n.abs().max().item<double>(), 0.0);
}

// The noise has the requested std in observation units (100,000 draws per
// feature: the sample std is within 1% of the truth with overwhelming
// probability), and the change feature carries the difference of two draws.
TEST(SensorNoiseTest, HasTheRequestedStandardDeviation) {
  const TokenLayout layout = DeltaLayout();
  const Normalizer normalizer = Statistics(layout);
  const SensorNoise noise = MakeSensorNoise(layout, normalizer, 1.0);
  const int count = 2000, length = 50;
  const at::Tensor windows = torch::zeros({count, length, layout.token_dim()});
  at::Generator gen = at::detail::createCPUGenerator(1);
  const double std = 0.03;
  const at::Tensor noisy =
      AddSensorNoise(noise, windows, torch::full({count}, std, at::kDouble), gen);
  for (int i = 0; i < kObservationDim; ++i) {
    const double observed = noisy.select(2, layout.observation_offset() + i).std().item<double>();
    EXPECT_NEAR(observed * 0.8, std, 0.01 * std) << "observation feature " << i;
    const double change = noisy.select(2, layout.delta_offset() + i).std().item<double>();
    EXPECT_NEAR(change * 0.05, std * std::sqrt(2.0), 0.01 * std * std::sqrt(2.0))
        << "change feature " << i;
  }
}

TEST(SensorNoiseTest, LayoutsWithoutChangesOnlyTouchObservations) {
  const TokenLayout layout{1, kObservationDim, false};
  const SensorNoise noise = MakeSensorNoise(layout, Statistics(layout), 0.1);
  EXPECT_TRUE(noise.delta_scale.empty());
  at::Generator gen = at::detail::createCPUGenerator(2);
  const at::Tensor windows = torch::zeros({4, 6, layout.token_dim()});
  const at::Tensor noisy = AddSensorNoise(noise, windows, torch::full({4}, 0.1), gen);
  EXPECT_TRUE(torch::equal(noisy.narrow(2, 0, 1), windows.narrow(2, 0, 1)));
  EXPECT_GT(noisy.narrow(2, 1, kObservationDim).abs().min().item<double>(), 0.0);
}

TEST(SensorNoiseTest, RejectsImpossibleSettings) {
  const TokenLayout layout = DeltaLayout();
  const Normalizer normalizer = Statistics(layout);
  EXPECT_THROW(MakeSensorNoise(layout, normalizer, -0.1), std::invalid_argument);
  EXPECT_THROW(MakeSensorNoise(layout, normalizer, std::nan("")), std::invalid_argument);
  EXPECT_THROW(MakeSensorNoise(layout, normalizer, std::numeric_limits<double>::infinity()),
               std::invalid_argument);
  EXPECT_THROW(MakeSensorNoise({1, 2, true}, normalizer, 0.1), std::invalid_argument);
  EXPECT_FALSE(MakeSensorNoise(layout, normalizer, 0.0).enabled());
}

}  // namespace
}  // namespace dfmpc::worldmodel
