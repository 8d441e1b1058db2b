// The outcome condition of the transformer (transformer.h: outcome_input),
// the window outcomes it is trained on, and training with it (trainer.h).
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "dfmpc/worldmodel/checkpoint.h"
#include "dfmpc/worldmodel/sampler.h"
#include "dfmpc/worldmodel/trainer.h"
#include "dfmpc/worldmodel/transformer.h"
#include "tiny_model.h"
#include "training_fixtures.h"
#include "training_windows.h"
#include "window_outcomes.h"

namespace dfmpc::worldmodel {
namespace {

constexpr int kTokenDim = 4;

DfTransformer TinyConditionedModel(uint64_t seed = 7) {
  torch::manual_seed(seed);
  TransformerConfig config = testing::TinyConfig(kTokenDim);
  config.outcome_input = true;
  DfTransformer model(config, seed);
  model->eval();
  return model;
}

at::Tensor Condition(double quantile, int64_t batch = 1) {
  return OutcomeInput(torch::full({batch}, quantile), torch::ones({batch}));
}

// The two clean tokens lead the window, as a planner's committed context
// does: neither their outputs nor their keys and values may depend on the
// condition, or a conditioned and an unconditioned call could not share a
// KV cache.
TEST(OutcomeInputTest, NoConditionAddsNothingAndAConditionReachesOnlyNoisyTokens) {
  DfTransformer model = TinyConditionedModel();
  torch::NoGradGuard no_grad;
  const auto tokens = torch::randn({2, 6, kTokenDim});
  const auto steps = torch::tensor({-1, -1, 100, 400, 700, 999}, torch::kLong);
  WindowKeysValues none_kv, conditioned_kv;
  const auto none = model->Forward(tokens, steps, nullptr, &none_kv);
  const auto dropped = model->Forward(tokens, steps, nullptr, nullptr, at::Tensor(),
                                      OutcomeInput(torch::full({2}, 0.9), torch::zeros({2})));
  EXPECT_TRUE(torch::equal(none, dropped));
  const auto conditioned =
      model->Forward(tokens, steps, nullptr, &conditioned_kv, at::Tensor(), Condition(0.9));
  EXPECT_TRUE(torch::equal(conditioned.narrow(1, 0, 2), none.narrow(1, 0, 2)));
  // Every noisy token moves.
  EXPECT_GT((conditioned - none).narrow(1, 2, 4).abs().amax({0, 2}).min().item<double>(), 1e-4);
  for (size_t l = 0; l < none_kv.keys.size(); ++l) {
    EXPECT_TRUE(
        torch::equal(conditioned_kv.keys[l].narrow(2, 0, 2), none_kv.keys[l].narrow(2, 0, 2)));
    EXPECT_TRUE(
        torch::equal(conditioned_kv.values[l].narrow(2, 0, 2), none_kv.values[l].narrow(2, 0, 2)));
  }
  // Another quantile, another output.
  const auto low = model->Forward(tokens, steps, nullptr, nullptr, at::Tensor(), Condition(0.1));
  EXPECT_GT((conditioned - low).abs().max().item<double>(), 1e-3);
}

TEST(OutcomeInputTest, OneQuantileBroadcastsOverTheGivenFlags) {
  const auto input = OutcomeInput(torch::full({1}, 0.75), torch::tensor({1.0, 0.0}));
  EXPECT_TRUE(torch::equal(input, torch::tensor({{0.5f, 1.0f}, {0.0f, 0.0f}})));
}

TEST(OutcomeInputTest, ForwardRefusesAnOutcomeItCannotTake) {
  DfTransformer plain = testing::TinyModel(kTokenDim);
  DfTransformer model = TinyConditionedModel();
  torch::NoGradGuard no_grad;
  const auto tokens = torch::randn({2, 4, kTokenDim});
  const auto steps = torch::full({4}, 10, torch::kLong);
  EXPECT_THROW(plain->Forward(tokens, steps, nullptr, nullptr, at::Tensor(), Condition(0.5)),
               std::invalid_argument);
  EXPECT_THROW(model->Forward(tokens, steps, nullptr, nullptr, at::Tensor(), Condition(0.5, 3)),
               std::invalid_argument);
  EXPECT_THROW(
      model->Forward(tokens, steps, nullptr, nullptr, at::Tensor(), Condition(0.5).narrow(1, 0, 1)),
      std::invalid_argument);
}

TEST(OutcomeInputTest, CheckpointsKeepTheOutcomeInput) {
  DfTransformer model = TinyConditionedModel();
  ModelInfo info;
  info.task = "pendulum_swingup";
  info.layout = TokenLayout{1, 3, /*observation_deltas=*/false};
  info.config = model->config();
  info.train_window = 16;
  const Normalizer normalizer(torch::zeros({kTokenDim}), torch::ones({kTokenDim}));
  const std::string path = ::testing::TempDir() + "/dfmpc_outcome_input.pt";
  SaveCheckpoint(path, info, normalizer, *model);
  Checkpoint loaded = LoadCheckpoint(path, {"pendulum_swingup", kTokenDim});
  EXPECT_TRUE(loaded.info.config.outcome_input);
  EXPECT_NE(DescribeCheckpoint(loaded).find("outcome:         conditioned"), std::string::npos);
  torch::NoGradGuard no_grad;
  const auto tokens = torch::randn({1, 4, kTokenDim});
  const auto steps = torch::tensor({-1, 5, 500, 999}, torch::kLong);
  EXPECT_TRUE(torch::equal(
      model->Forward(tokens, steps, nullptr, nullptr, at::Tensor(), Condition(0.8)),
      loaded.model->Forward(tokens, steps, nullptr, nullptr, at::Tensor(), Condition(0.8))));
}

// Guided sampling over a KV cache equals the uncached reference: the
// conditioned and unconditioned calls share the cache (the clean tokens'
// keys and values do not depend on the condition).
TEST(OutcomeInputTest, GuidedSamplingWithACacheEqualsTheReference) {
  DfTransformer model = TinyConditionedModel();
  const NoiseSchedule schedule;
  const Sampler sampler(*model, schedule);
  torch::manual_seed(3);
  const auto context = torch::randn({1, 5, kTokenDim});
  SampleOptions options;
  options.num_levels = 4;
  options.horizon = 6;
  options.seed = 11;
  auto sample = [&](double weight, CacheMode mode) {
    options.outcome_guidance = weight;
    options.cache_mode = mode;
    return sampler.Generate(context, 3, options).tokens;
  };
  for (const double weight : {1.0, 2.5}) {
    const auto reference = sample(weight, CacheMode::kNone);
    EXPECT_LT((sample(weight, CacheMode::kExact) - reference).abs().max().item<double>(), 1e-5)
        << weight;
    EXPECT_GT((reference - sample(0.0, CacheMode::kNone)).abs().max().item<double>(), 1e-3)
        << weight;
  }
  options.outcome_guidance = 1.0;
  options.target_outcome = 1.5;
  EXPECT_THROW(sampler.Generate(context, 3, options), std::invalid_argument);
  options.target_outcome = 0.9;
  options.outcome_guidance = -1.0;
  EXPECT_THROW(sampler.Generate(context, 3, options), std::invalid_argument);
  DfTransformer plain = testing::TinyModel(kTokenDim);
  options.outcome_guidance = 2.0;
  EXPECT_THROW(Sampler(*plain, schedule).Generate(context, 3, options), std::invalid_argument);
}

// One-feature tokens equal to their rewards.
std::vector<at::Tensor> TokensOf(const std::vector<at::Tensor>& rewards) {
  std::vector<at::Tensor> tokens;
  for (const at::Tensor& r : rewards) tokens.push_back(r.unsqueeze(1));
  return tokens;
}

TEST(WindowOutcomesTest, QuantilesRankWindowsByTheirMeanReward) {
  // Windows of 2: means 0.5, 1.5, 2.5 in the first sequence, 5, 5 in the second.
  const std::vector<at::Tensor> rewards = {torch::tensor({0.f, 1.f, 2.f, 3.f}),
                                           torch::tensor({5.f, 5.f, 5.f})};
  const WindowOutcomes outcomes(TokensOf(rewards), rewards, 2, 0);
  const std::vector<float>& quantiles = outcomes.training_quantiles();
  ASSERT_EQ(quantiles.size(), 5u);
  const std::vector<float> distinct = {0.1f, 0.3f, 0.5f};
  for (size_t i = 0; i < distinct.size(); ++i) EXPECT_FLOAT_EQ(quantiles[i], distinct[i]) << i;
  // The two windows of mean 5 share the top two slots, 0.7 and 0.9.
  for (size_t i = 3; i < 5; ++i) {
    EXPECT_TRUE(std::abs(quantiles[i] - 0.7f) < 1e-6 || std::abs(quantiles[i] - 0.9f) < 1e-6)
        << quantiles[i];
  }
  // Other sequences rank against the training windows.
  const std::vector<at::Tensor> others = {torch::tensor({9.f, 9.f}), torch::tensor({-1.f, -1.f})};
  EXPECT_EQ(outcomes.QuantilesOf(TokensOf(others), others), (std::vector<float>{1.f, 0.f}));
}

// A binary reward: most windows never succeed or always do. Tied windows
// spread over the quantiles they share, so a target of 0.9 inside the tie of
// all-success windows is a label training saw (a shared mid-rank would give
// them all 0.75 and leave 0.9 beyond every label).
TEST(WindowOutcomesTest, TiedWindowsCoverTheirQuantiles) {
  std::vector<at::Tensor> rewards;
  for (int s = 0; s < 100; ++s) rewards.push_back(torch::full({4}, s < 50 ? 1.f : 0.f));
  const std::vector<float> quantiles =
      WindowOutcomes(TokensOf(rewards), rewards, 2, 0).training_quantiles();
  ASSERT_EQ(quantiles.size(), 300u);
  std::vector<float> successes;
  for (size_t w = 0; w < 150; ++w) successes.push_back(quantiles[w]);
  const auto [low, high] = std::minmax_element(successes.begin(), successes.end());
  EXPECT_GE(*low, 0.5f);
  EXPECT_LT(*low, 0.55f);
  EXPECT_GT(*high, 0.95f);
  EXPECT_LT(*high, 1.0f);
  const double mean = std::accumulate(successes.begin(), successes.end(), 0.0) / 150;
  EXPECT_NEAR(mean, 0.75, 0.03);  // the standard error of 150 draws is 0.012
  for (size_t w = 150; w < 300; ++w) EXPECT_LT(quantiles[w], 0.5f) << w;
  // The same data, the same labels.
  EXPECT_EQ(WindowOutcomes(TokensOf(rewards), rewards, 2, 0).training_quantiles(), quantiles);
}

// Sequences whose start state (feature 1) sets most of the reward and whose
// action (feature 0) adds a little: the mean reward ranks windows by where
// they start, the advantage over the nearest other sequences by the action.
TEST(WindowOutcomesTest, TheBaselineCreditsActionsNotStarts) {
  std::vector<at::Tensor> sequences, rewards;
  for (int i = 0; i < 20; ++i) {
    const float level = 0.05f * i, action = i % 2 == 1 ? 1.f : 0.f;
    sequences.push_back(torch::tensor({action, level}).repeat({6, 1}));
    rewards.push_back(torch::full({6}, level + 0.04f * action));  // gain < level step
  }
  const auto best_below_worst = [](const std::vector<float>& quantiles, auto is_better) {
    float worst_better = 1.f, best_other = 0.f;
    for (size_t w = 0; w < quantiles.size(); ++w) {
      const int sequence = static_cast<int>(w) / 4;  // 4 windows of 3 per sequence
      if (is_better(sequence)) {
        worst_better = std::min(worst_better, quantiles[w]);
      } else {
        best_other = std::max(best_other, quantiles[w]);
      }
    }
    return best_other < worst_better;
  };
  const auto acts = [](int sequence) { return sequence % 2 == 1; };
  const auto starts_high = [](int sequence) { return sequence >= 10; };
  const WindowOutcomes mean_reward(sequences, rewards, 3, 0, 1);
  EXPECT_TRUE(best_below_worst(mean_reward.training_quantiles(), starts_high));
  EXPECT_FALSE(best_below_worst(mean_reward.training_quantiles(), acts));
  const WindowOutcomes advantage(sequences, rewards, 3, 2, 1);
  EXPECT_TRUE(best_below_worst(advantage.training_quantiles(), acts));
  EXPECT_FALSE(best_below_worst(advantage.training_quantiles(), starts_high));
  // A new window is judged against the training sequences that start near
  // it: the same reward is the best from a low start, the worst from a high.
  const auto new_window = [](float level) {
    return std::vector<at::Tensor>{torch::tensor({0.f, level}).repeat({3, 1})};
  };
  const std::vector<at::Tensor> reward = {torch::full({3}, 0.6f)};
  EXPECT_EQ(advantage.QuantilesOf(new_window(0.22f), reward), std::vector<float>{1.f});
  EXPECT_EQ(advantage.QuantilesOf(new_window(0.97f), reward), std::vector<float>{0.f});
  EXPECT_EQ(mean_reward.QuantilesOf(new_window(0.22f), reward),
            mean_reward.QuantilesOf(new_window(0.97f), reward));
  // Impossible settings.
  EXPECT_THROW(WindowOutcomes(sequences, rewards, 3, -1, 1), std::invalid_argument);
  EXPECT_THROW(WindowOutcomes(sequences, rewards, 3, 2, 2), std::invalid_argument);
  EXPECT_THROW(WindowOutcomes({sequences[0]}, {rewards[0]}, 3, 2, 1), std::invalid_argument);
}

// SampleWindows' numbering of the windows is the order QuantilesOf gives
// them in: each drawn window's quantile is that of its own rewards.
TEST(WindowOutcomesTest, SampledWindowsFindTheirOwnQuantiles) {
  torch::manual_seed(5);
  std::vector<at::Tensor> rewards = {torch::randn({7}), torch::randn({12}), torch::randn({5})};
  const std::vector<at::Tensor> sequences = TokensOf(rewards);
  const WindowOutcomes outcomes(sequences, rewards, 4, 0);
  const std::vector<float>& quantiles = outcomes.training_quantiles();
  at::Generator generator = at::detail::createCPUGenerator(11);
  std::vector<int64_t> picks;
  const at::Tensor windows = SampleWindows(sequences, 4, 32, generator, &picks);
  ASSERT_EQ(picks.size(), 32u);
  for (size_t b = 0; b < picks.size(); ++b) {
    const at::Tensor own = windows[b].squeeze(1).contiguous();
    EXPECT_EQ(quantiles[picks[b]], outcomes.QuantilesOf({windows[b]}, {own}).front()) << b;
  }
}

// The mean clean estimate of a window of pure noise at the highest level.
double GeneratedLevel(DfTransformerImpl& model, const NoiseSchedule& schedule,
                      const at::Tensor& outcome) {
  torch::NoGradGuard no_grad;
  torch::manual_seed(17);
  const auto noise = torch::randn({64, 8, kTokenDim});
  const int64_t top = schedule.num_timesteps() - 1;
  const auto out = model.Forward(noise, torch::full({8}, top, torch::kLong), nullptr, nullptr,
                                 at::Tensor(), outcome);
  at::Tensor x0, eps;
  NoiseSchedule::ToX0AndEps(Prediction::kV, noise, out, torch::full({1}, schedule.AlphaBar(top)),
                            &x0, &eps);
  return x0.mean().item<double>();
}

TEST(OutcomeTrainingTest, TheConditionSteersWhatTheModelGenerates) {
  const NoiseSchedule schedule;
  const testing::LeveledEpisodes train = testing::MakeLeveledEpisodes(24, 20, 1);
  const testing::LeveledEpisodes validation = testing::MakeLeveledEpisodes(4, 20, 2);
  TransformerConfig config = testing::TinyConfig(kTokenDim);
  config.outcome_input = true;
  Trainer trainer(config, schedule, testing::FastTrainerOptions(300), train.tokens,
                  validation.tokens, train.rewards, validation.rewards);
  trainer.Run(::testing::TempDir() + "/dfmpc_outcome.state", false, nullptr, nullptr);
  DfTransformerImpl& model = trainer.ema_model();
  const double high = GeneratedLevel(model, schedule, Condition(0.9));
  const double none = GeneratedLevel(model, schedule, at::Tensor());
  const double low = GeneratedLevel(model, schedule, Condition(0.1));
  // The levels are uniform on [-1, 1]: the 0.9 and 0.1 quantiles sit near
  // 0.8 and -0.8, 1.6 apart; the unconditioned model generates the mean.
  const std::string levels = "low " + std::to_string(low) + ", none " + std::to_string(none) +
                             ", high " + std::to_string(high);
  EXPECT_GT(high - low, 0.8) << levels;
  EXPECT_GT(high, none + 0.2) << levels;
  EXPECT_GT(none, low + 0.2) << levels;

  // Guided sampling, from the sampler: a weight above 1 pushes the samples
  // past the conditioned model's toward the target.
  const Sampler sampler(model, schedule);
  SampleOptions options;
  options.num_levels = 8;
  options.horizon = 8;
  options.target_outcome = 0.9;
  auto sampled_level = [&](double weight) {
    options.outcome_guidance = weight;
    torch::NoGradGuard no_grad;
    return sampler.Generate(torch::zeros({1, 0, kTokenDim}), 32, options)
        .tokens.mean()
        .item<double>();
  };
  const double unguided = sampled_level(0.0), conditioned = sampled_level(1.0),
               guided = sampled_level(3.0);
  EXPECT_GT(conditioned, unguided + 0.2) << unguided << " " << conditioned << " " << guided;
  EXPECT_GT(guided, conditioned) << unguided << " " << conditioned << " " << guided;
}

TEST(OutcomeTrainingTest, RewardsGoWithTheOutcomeInputAndMatchTheSequences) {
  const NoiseSchedule schedule;
  const testing::LeveledEpisodes data = testing::MakeLeveledEpisodes(3, 12, 1);
  TransformerConfig conditioned = testing::TinyConfig(kTokenDim);
  conditioned.outcome_input = true;
  const TrainerOptions options = testing::FastTrainerOptions(10);
  auto make = [&](const TransformerConfig& config, std::vector<at::Tensor> train_rewards,
                  std::vector<at::Tensor> validation_rewards) {
    Trainer trainer(config, schedule, options, data.tokens, data.tokens, std::move(train_rewards),
                    std::move(validation_rewards));
  };
  EXPECT_NO_THROW(make(conditioned, data.rewards, data.rewards));
  EXPECT_THROW(make(conditioned, {}, {}), std::invalid_argument);
  EXPECT_THROW(make(testing::TinyConfig(kTokenDim), data.rewards, data.rewards),
               std::invalid_argument);
  std::vector<at::Tensor> short_rewards = data.rewards;
  short_rewards[1] = short_rewards[1].narrow(0, 0, 11);
  EXPECT_THROW(make(conditioned, short_rewards, data.rewards), std::invalid_argument);
  std::vector<at::Tensor> nan_rewards = data.rewards;
  nan_rewards[2] = nan_rewards[2].clone();
  nan_rewards[2][3] = NAN;
  EXPECT_THROW(make(conditioned, data.rewards, nan_rewards), std::invalid_argument);
  TrainerOptions always_dropped = options;
  always_dropped.outcome_dropout = 1.0;
  EXPECT_THROW(always_dropped.Validate(), std::invalid_argument);
}

}  // namespace
}  // namespace dfmpc::worldmodel
