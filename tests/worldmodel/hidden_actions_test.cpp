// A model that hides its clean tokens' actions (transformer.h:
// hidden_clean_actions): what it reads, what it ignores, and that the
// setting survives its model file.
#include <gtest/gtest.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <stdexcept>
#include <string>

#include "dfmpc/worldmodel/checkpoint.h"
#include "dfmpc/worldmodel/tokens.h"
#include "dfmpc/worldmodel/transformer.h"
#include "tiny_model.h"

namespace dfmpc::worldmodel {
namespace {

constexpr int kTokenDim = 5;
constexpr int kActionDim = 2;

DfTransformer HidingModel(int hidden = kActionDim) {
  torch::manual_seed(7);
  TransformerConfig config = testing::TinyConfig(kTokenDim);
  config.hidden_clean_actions = hidden;
  DfTransformer model(config, 7);
  model->eval();
  return model;
}

struct Outputs {
  at::Tensor out;
  WindowKeysValues kv;
};

Outputs Call(DfTransformer& model, const at::Tensor& tokens) {
  // Two clean tokens lead the window, as a planner's context does.
  const auto steps = torch::tensor({-1, -1, 100, 600}, torch::kLong);
  Outputs result;
  result.out = model->Forward(tokens, steps, nullptr, &result.kv);
  return result;
}

bool SameKeysValues(const WindowKeysValues& a, const WindowKeysValues& b) {
  for (size_t l = 0; l < a.keys.size(); ++l) {
    if (!torch::equal(a.keys[l], b.keys[l]) || !torch::equal(a.values[l], b.values[l])) {
      return false;
    }
  }
  return true;
}

// Adds 1 to features [first, first + count) of tokens [from, to).
at::Tensor Nudged(const at::Tensor& tokens, int64_t from, int64_t to, int64_t first,
                  int64_t count) {
  at::Tensor nudged = tokens.clone();
  nudged.narrow(1, from, to - from).narrow(2, first, count).add_(1.0);
  return nudged;
}

TEST(HiddenActionsTest, CleanTokensActionsReachNothing) {
  DfTransformer model = HidingModel();
  torch::NoGradGuard no_grad;
  const auto tokens = torch::randn({2, 4, kTokenDim});
  const Outputs base = Call(model, tokens);
  const Outputs moved = Call(model, Nudged(tokens, 0, 2, 0, kActionDim));
  EXPECT_TRUE(torch::equal(base.out, moved.out));
  EXPECT_TRUE(SameKeysValues(base.kv, moved.kv));
}

TEST(HiddenActionsTest, EverythingElseIsRead) {
  DfTransformer model = HidingModel();
  torch::NoGradGuard no_grad;
  const auto tokens = torch::randn({2, 4, kTokenDim});
  const at::Tensor base = Call(model, tokens).out;
  // A clean token's observation, and a noisy token's action.
  const at::Tensor observation = Call(model, Nudged(tokens, 0, 2, kActionDim, 1)).out;
  const at::Tensor noisy_action = Call(model, Nudged(tokens, 2, 4, 0, kActionDim)).out;
  EXPECT_GT((observation - base).abs().max().item<double>(), 1e-3);
  EXPECT_GT((noisy_action - base).narrow(1, 2, 2).abs().max().item<double>(), 1e-3);
}

// The same weights without hiding: equal where the clean actions are zero
// (only those features are masked), different where they are not.
TEST(HiddenActionsTest, HidingIsZeroingTheCleanActions) {
  DfTransformer hiding = HidingModel();
  DfTransformer reading = HidingModel(0);
  torch::NoGradGuard no_grad;
  at::Tensor tokens = torch::randn({1, 4, kTokenDim});
  EXPECT_GT((Call(hiding, tokens).out - Call(reading, tokens).out).abs().max().item<double>(),
            1e-3);
  tokens.narrow(1, 0, 2).narrow(2, 0, kActionDim).zero_();
  EXPECT_TRUE(torch::allclose(Call(hiding, tokens).out, Call(reading, tokens).out, 1e-6, 1e-6));
}

TEST(HiddenActionsTest, TheModelFileKeepsItAndBadCountsAreRefused) {
  ModelInfo info;
  info.task = "pendulum_swingup";
  info.layout = TokenLayout{kActionDim, 3, /*observation_deltas=*/false};
  info.config = HidingModel()->config();
  info.train_window = 16;
  const std::string path = ::testing::TempDir() + "/dfmpc_hidden_actions.pt";
  const Normalizer normalizer(torch::zeros({kTokenDim}), torch::ones({kTokenDim}));
  SaveCheckpoint(path, info, normalizer, *HidingModel());
  EXPECT_EQ(LoadCheckpoint(path).model->config().hidden_clean_actions, kActionDim);

  TransformerConfig bad = testing::TinyConfig(kTokenDim);
  bad.hidden_clean_actions = -1;
  EXPECT_THROW(bad.Validate(), std::invalid_argument);
  bad.hidden_clean_actions = kTokenDim;
  EXPECT_THROW(bad.Validate(), std::invalid_argument);
}

}  // namespace
}  // namespace dfmpc::worldmodel
