// The clean known-action side input of the transformer (transformer.h): the
// model, the sampler in both cache modes, and checkpoints.
#include <gtest/gtest.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <stdexcept>
#include <string>

#include "dfmpc/worldmodel/checkpoint.h"
#include "dfmpc/worldmodel/sampler.h"
#include "dfmpc/worldmodel/transformer.h"
#include "tiny_model.h"

namespace dfmpc::worldmodel {
namespace {

constexpr int kTokenDim = 5;  // one action feature, then four others

DfTransformer TinyModelWithKnownActions(uint64_t seed = 7) {
  torch::manual_seed(seed);
  TransformerConfig config = testing::TinyConfig(kTokenDim);
  config.action_input_dim = 1;
  DfTransformer model(config, seed);
  model->eval();
  return model;
}

// Known: the action of every token, plus a random batch of values.
KnownFeatures KnownActions(int64_t batch, int64_t horizon) {
  auto mask = torch::zeros({horizon, kTokenDim}, torch::kBool);
  mask.select(1, 0).fill_(true);
  return KnownFeatures{mask, torch::randn({batch, horizon, kTokenDim})};
}

TEST(KnownActionInputTest, NothingKnownAddsNothingAndKnownActionsChangeTheOutput) {
  DfTransformer model = TinyModelWithKnownActions();
  torch::NoGradGuard no_grad;
  const auto tokens = torch::randn({2, 6, kTokenDim});
  const auto steps = torch::tensor({-1, 3, 100, 400, 700, 999}, torch::kLong);
  const auto actions = torch::randn({2, 6, 1});
  const auto none = model->Forward(tokens, steps, nullptr);
  const auto zero = model->Forward(tokens, steps, nullptr, nullptr,
                                   KnownActionInput(actions, torch::zeros({2, 6, 1})));
  EXPECT_TRUE(torch::equal(none, zero));
  const auto known = model->Forward(tokens, steps, nullptr, nullptr,
                                    KnownActionInput(actions, torch::ones({2, 6, 1})));
  EXPECT_GT((known - none).abs().max().item<double>(), 1e-3);
}

TEST(KnownActionInputTest, ForwardRefusesASideInputItCannotTake) {
  DfTransformer plain = testing::TinyModel(kTokenDim);
  DfTransformer model = TinyModelWithKnownActions();
  torch::NoGradGuard no_grad;
  const auto tokens = torch::randn({1, 4, kTokenDim});
  const auto steps = torch::full({4}, 10, torch::kLong);
  const auto input = KnownActionInput(torch::randn({1, 4, 1}), torch::ones({1, 4, 1}));
  EXPECT_THROW(plain->Forward(tokens, steps, nullptr, nullptr, input), std::invalid_argument);
  EXPECT_THROW(model->Forward(tokens, steps, nullptr, nullptr, input.narrow(1, 0, 3)),
               std::invalid_argument);
  EXPECT_THROW(model->Forward(tokens, steps, nullptr, nullptr, torch::zeros({1, 4, 3})),
               std::invalid_argument);
  TransformerConfig config = testing::TinyConfig(kTokenDim);
  config.action_input_dim = kTokenDim;  // the whole token cannot be the action
  EXPECT_THROW(DfTransformer{config}, std::invalid_argument);
}

// Both cache modes give the side input to the same tokens: they still agree
// (same bound as sampler_test.cpp), and the input does reach the samples.
TEST(KnownActionInputTest, SamplerModesAgreeAndTheInputReachesTheSamples) {
  DfTransformer model = TinyModelWithKnownActions();
  const NoiseSchedule schedule;
  const Sampler sampler(*model, schedule);
  torch::manual_seed(3);
  const auto context = torch::randn({1, 5, kTokenDim});
  for (const ScheduleKind kind : {ScheduleKind::kPyramid, ScheduleKind::kFullSequence,
                                  ScheduleKind::kAutoregressive, ScheduleKind::kTrapezoid}) {
    SampleOptions options;
    options.schedule = kind;
    options.num_levels = 4;
    options.horizon = 6;
    options.seed = 11;
    const KnownFeatures known = KnownActions(3, options.horizon);
    options.cache_mode = CacheMode::kNone;
    const auto none = sampler.Generate(context, 3, options, nullptr, &known).tokens;
    options.cache_mode = CacheMode::kExact;
    const auto exact = sampler.Generate(context, 3, options, nullptr, &known).tokens;
    EXPECT_LT((none - exact).abs().max().item<double>(), 1e-5) << ScheduleKindName(kind);
    EXPECT_TRUE(torch::equal(exact.select(2, 0), known.values.select(2, 0)));

    // Inpainting alone: the same model with its side-input weights zeroed.
    DfTransformer inpainting = TinyModelWithKnownActions();
    {
      torch::NoGradGuard no_grad;
      for (auto& p : inpainting->named_parameters()) {
        if (p.key().find("known_action_input") != std::string::npos) p.value().zero_();
      }
    }
    const Sampler inpainting_sampler(*inpainting, schedule);
    const auto without = inpainting_sampler.Generate(context, 3, options, nullptr, &known).tokens;
    EXPECT_GT((without - exact).abs().max().item<double>(), 1e-3) << ScheduleKindName(kind);
  }
}

TEST(KnownActionInputTest, CheckpointsKeepTheSideInput) {
  DfTransformer model = TinyModelWithKnownActions();
  ModelInfo info;
  info.task = "pendulum_swingup";
  info.layout = TokenLayout{1, 2, /*observation_deltas=*/true};
  info.config = model->config();
  info.train_window = 16;
  const Normalizer normalizer(torch::zeros({kTokenDim}), torch::ones({kTokenDim}));
  const std::string path = ::testing::TempDir() + "/dfmpc_known_actions.pt";
  SaveCheckpoint(path, info, normalizer, *model);
  Checkpoint loaded = LoadCheckpoint(path, {"pendulum_swingup", kTokenDim});
  EXPECT_EQ(loaded.info.config.action_input_dim, 1);
  EXPECT_NE(DescribeCheckpoint(loaded).find("clean side input"), std::string::npos);
  torch::NoGradGuard no_grad;
  const auto tokens = torch::randn({1, 4, kTokenDim});
  const auto steps = torch::tensor({-1, 5, 500, 999}, torch::kLong);
  const auto input = KnownActionInput(torch::randn({1, 4, 1}), torch::ones({1, 4, 1}));
  EXPECT_TRUE(torch::equal(model->Forward(tokens, steps, nullptr, nullptr, input),
                           loaded.model->Forward(tokens, steps, nullptr, nullptr, input)));

  info.layout = TokenLayout{2, 1, /*observation_deltas=*/true};  // two action features
  EXPECT_THROW(SaveCheckpoint(path + ".other", info, normalizer, *model), std::invalid_argument);
}

}  // namespace
}  // namespace dfmpc::worldmodel
