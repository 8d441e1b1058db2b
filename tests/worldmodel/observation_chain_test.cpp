// Linking generated observations to their changes (observation_chain.h),
// alone and inside the sampler.
#include "dfmpc/worldmodel/observation_chain.h"

#include <gtest/gtest.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <stdexcept>

#include "dfmpc/worldmodel/sampler.h"
#include "agreement_cases.h"
#include "tiny_model.h"

namespace dfmpc::worldmodel {
namespace {

// One action and two observation features, then their two changes: the
// tiny model's 5 features.
const TokenLayout kLayout{1, 2, true};

// Float rounding of one multiply-add per feature on unit-scale numbers.
constexpr double kLinkTolerance = 1e-5;

Normalizer SomeNormalizer() {
  torch::manual_seed(5);
  return Normalizer(torch::randn({kLayout.token_dim()}),
                    torch::rand({kLayout.token_dim()}) + 0.25);
}

// Normalized tokens of a random episode of `steps` steps: [steps + 1, d].
at::Tensor RealTokens(const Normalizer& normalizer, int64_t steps = 12) {
  torch::manual_seed(9);
  const auto observations = torch::randn({steps + 1, kLayout.observation_dim}).cumsum(0);
  const auto actions = torch::randn({steps, kLayout.action_dim});
  return normalizer.Normalize(EpisodeTokens(kLayout, observations, actions));
}

// Largest violation of o_t = o_{t-1} + d_t over tokens 1.. of `tokens`
// ([..., T, d], normalized), in normalized observation units.
double ChainViolation(const at::Tensor& tokens, const Normalizer& normalizer) {
  const auto raw = normalizer.Denormalize(tokens);
  const auto o = raw.narrow(-1, kLayout.observation_offset(), kLayout.observation_dim);
  const auto d = raw.narrow(-1, kLayout.delta_offset(), kLayout.observation_dim);
  const auto scale = normalizer.scale().narrow(0, kLayout.observation_offset(),
                                               kLayout.observation_dim);
  const auto steps = o.size(-2) - 1;
  return ((o.narrow(-2, 1, steps) - o.narrow(-2, 0, steps) - d.narrow(-2, 1, steps)) / scale)
      .abs()
      .max()
      .item<double>();
}

TEST(ObservationChainTest, RealTokensAreAlreadyLinked) {
  const Normalizer normalizer = SomeNormalizer();
  const ObservationChain chain(kLayout, normalizer);
  const auto tokens = RealTokens(normalizer);
  auto linked = tokens.clone();
  for (int64_t t = 1; t < tokens.size(0); ++t) chain.Link(linked[t - 1], linked[t]);
  EXPECT_LT((linked - tokens).abs().max().item<double>(), kLinkTolerance);
}

TEST(ObservationChainTest, RestoresADriftedObservationAndTouchesNothingElse) {
  const Normalizer normalizer = SomeNormalizer();
  const ObservationChain chain(kLayout, normalizer);
  const auto tokens = RealTokens(normalizer);
  auto drifted = tokens.slice(0, 3, 5).clone();
  drifted[1].narrow(0, kLayout.observation_offset(), kLayout.observation_dim).add_(0.3);
  ASSERT_GT(ChainViolation(drifted, normalizer), 0.1);

  chain.Link(drifted[0], drifted[1]);
  EXPECT_LT((drifted - tokens.slice(0, 3, 5)).abs().max().item<double>(), kLinkTolerance);
  EXPECT_LT(ChainViolation(drifted, normalizer), kLinkTolerance);
}

TEST(ObservationChainTest, RejectsLayoutsWithoutChangesAndOtherNormalizers) {
  EXPECT_THROW(ObservationChain(TokenLayout{1, 2, false}, SomeNormalizer()),
               std::invalid_argument);
  EXPECT_THROW(ObservationChain(TokenLayout{2, 2, true}, SomeNormalizer()),
               std::invalid_argument);
}

using testing::AgreementCase;

class ChainedSamplerTest : public ::testing::TestWithParam<AgreementCase> {};

// The chain keeps the cache exact (both modes link the same tokens at the
// same call), and every clean generated token, the first one to the last
// context token, satisfies o_t = o_{t-1} + d_t; unlinked samples of the
// same untrained model do not, so the check can fail.
TEST_P(ChainedSamplerTest, LinksEveryTokenAndKeepsTheCacheExact) {
  const auto [kind, num_context, levels, horizon, batch] = GetParam();
  DfTransformer model = testing::TinyModel(kLayout.token_dim());
  const NoiseSchedule schedule;
  const Sampler sampler(*model, schedule);
  const Normalizer normalizer = SomeNormalizer();
  const ObservationChain chain(kLayout, normalizer);
  const auto context = RealTokens(normalizer).slice(0, 0, num_context).unsqueeze(0);

  SampleOptions options;
  options.schedule = kind;
  options.num_levels = levels;
  options.horizon = horizon;
  options.seed = 11;
  options.chain = &chain;
  options.cache_mode = CacheMode::kNone;
  const auto none = sampler.Generate(context, batch, options).tokens;
  options.cache_mode = CacheMode::kExact;
  const auto exact = sampler.Generate(context, batch, options).tokens;
  // Same bound as sampler_test.cpp: the chain adds identical elementwise
  // work in both modes.
  EXPECT_LT((none - exact).abs().max().item<double>(), 1e-5);

  const auto sequence = torch::cat({context.expand({batch, -1, -1}), exact}, 1);
  EXPECT_LT(ChainViolation(sequence, normalizer), kLinkTolerance);
  options.chain = nullptr;
  const auto unlinked = sampler.Generate(context, batch, options).tokens;
  EXPECT_GT(ChainViolation(torch::cat({context.expand({batch, -1, -1}), unlinked}, 1),
                           normalizer),
            0.01);
}

INSTANTIATE_TEST_SUITE_P(AllSchedules, ChainedSamplerTest,
                         ::testing::Combine(testing::kAllScheduleKinds, ::testing::Values(6),
                                            ::testing::Values(1, 4), ::testing::Values(1, 8),
                                            ::testing::Values(1, 3)),
                         testing::AgreementCaseName);

TEST(ChainedSamplerTest, KnownFeaturesWinOverTheChain) {
  DfTransformer model = testing::TinyModel(kLayout.token_dim());
  const NoiseSchedule schedule;
  const Sampler sampler(*model, schedule);
  const Normalizer normalizer = SomeNormalizer();
  const ObservationChain chain(kLayout, normalizer);
  SampleOptions options;
  options.num_levels = 4;
  options.chain = &chain;
  auto mask = torch::zeros({options.horizon, kLayout.token_dim()}, torch::kBool);
  mask[2][kLayout.observation_offset()] = true;  // one goal observation feature
  const KnownFeatures known{mask, torch::randn({1, options.horizon, kLayout.token_dim()})};
  const auto context = RealTokens(normalizer).slice(0, 0, 4).unsqueeze(0);
  const auto tokens = sampler.Generate(context, 2, options, nullptr, &known).tokens;
  EXPECT_TRUE(torch::equal(tokens.select(1, 2).select(1, kLayout.observation_offset()),
                           known.values.select(1, 2)
                               .select(1, kLayout.observation_offset())
                               .expand({2})));
}

TEST(ChainedSamplerTest, ChainForOtherTokensThrows) {
  DfTransformer model = testing::TinyModel(kLayout.token_dim());
  const NoiseSchedule schedule;
  const Sampler sampler(*model, schedule);
  const TokenLayout wider{2, 2, true};
  const ObservationChain chain(wider, Normalizer(torch::zeros({6}), torch::ones({6})));
  SampleOptions options;
  options.chain = &chain;
  EXPECT_THROW(sampler.Generate(torch::randn({1, 3, kLayout.token_dim()}), 1, options),
               std::invalid_argument);
}

}  // namespace
}  // namespace dfmpc::worldmodel
