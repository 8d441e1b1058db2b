// OpenLoopRollout: the chunked, bounded-history rollout behind `dfmpc
// rollout`. Cache and reference agree while nothing is evicted, the given
// actions come back exactly, seeds reproduce, and the kept state does not
// grow with the rollout's length.
#include <gtest/gtest.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "dfmpc/worldmodel/observation_chain.h"
#include "dfmpc/worldmodel/open_loop_rollout.h"
#include "dfmpc/worldmodel/transformer.h"
#include "tiny_model.h"

namespace dfmpc::worldmodel {
namespace {

using testing::TinyModel;

constexpr int kActionDim = 1;
// Float32 rounding over a few chunks of a 2-layer model, as the sampler's
// cache-vs-reference tests (conditioning_test.cpp) allow.
constexpr double kAgreementTolerance = 1e-5;

RolloutOptions Options(CacheMode mode, int history = 24) {
  RolloutOptions options;
  options.chunk = 4;
  options.num_levels = 6;
  options.cache_mode = mode;
  options.history = history;
  options.num_sinks = 2;
  options.seed = 11;
  return options;
}

// Generates `steps` tokens in chunks, on actions drawn from `generator`'s
// seed; returns them [steps, d].
torch::Tensor Roll(OpenLoopRollout& rollout, const torch::Tensor& context, int steps,
                   std::vector<torch::Tensor>* actions_out = nullptr) {
  rollout.Reset(context);
  torch::manual_seed(99);
  std::vector<torch::Tensor> out;
  for (int done = 0; done < steps; done += rollout.options().chunk) {
    const int n = std::min(rollout.options().chunk, steps - done);
    const torch::Tensor actions = torch::randn({n, kActionDim});
    if (actions_out != nullptr) actions_out->push_back(actions);
    out.push_back(rollout.Next(actions));
  }
  return torch::cat(out);
}

TEST(OpenLoopRolloutTest, ExactCacheEqualsReferenceBeforeEviction) {
  torch::NoGradGuard no_grad;
  DfTransformer model = TinyModel();
  const NoiseSchedule schedule;
  const torch::Tensor context = torch::randn({6, 5});
  // 6 context + 18 generated = 24 = history: nothing is evicted.
  OpenLoopRollout exact(*model, schedule, kActionDim, Options(CacheMode::kExact));
  OpenLoopRollout none(*model, schedule, kActionDim, Options(CacheMode::kNone));
  const torch::Tensor a = Roll(exact, context, 18), b = Roll(none, context, 18);
  EXPECT_EQ(exact.history_size(), 24);
  EXPECT_LT((a - b).abs().max().item<double>(), kAgreementTolerance);
  // The chunks are not trivially equal: they differ from each other.
  EXPECT_GT((a.narrow(0, 0, 4) - a.narrow(0, 4, 4)).abs().max().item<double>(), 1e-2);
}

TEST(OpenLoopRolloutTest, GivenActionsComeBackExactly) {
  torch::NoGradGuard no_grad;
  DfTransformer model = TinyModel();
  const NoiseSchedule schedule;
  OpenLoopRollout rollout(*model, schedule, kActionDim, Options(CacheMode::kExact));
  std::vector<torch::Tensor> actions;
  const torch::Tensor tokens = Roll(rollout, torch::randn({3, 5}), 10, &actions);
  EXPECT_TRUE(torch::equal(tokens.narrow(1, 0, kActionDim), torch::cat(actions)));
}

TEST(OpenLoopRolloutTest, SameSeedSameTokensOtherSeedOthers) {
  torch::NoGradGuard no_grad;
  DfTransformer model = TinyModel();
  const NoiseSchedule schedule;
  const torch::Tensor context = torch::randn({5, 5});
  RolloutOptions options = Options(CacheMode::kExact);
  OpenLoopRollout first(*model, schedule, kActionDim, options);
  OpenLoopRollout second(*model, schedule, kActionDim, options);
  const torch::Tensor a = Roll(first, context, 12);
  EXPECT_TRUE(torch::equal(a, Roll(second, context, 12)));
  EXPECT_TRUE(torch::equal(a, Roll(first, context, 12)));  // Reset starts over
  options.seed = 12;
  OpenLoopRollout other(*model, schedule, kActionDim, options);
  EXPECT_GT((a - Roll(other, context, 12)).abs().max().item<double>(), 1e-3);
}

TEST(OpenLoopRolloutTest, ChangingTheCallersContextAfterResetChangesNothing) {
  torch::NoGradGuard no_grad;
  DfTransformer model = TinyModel();
  const NoiseSchedule schedule;
  const torch::Tensor context = torch::randn({5, 5});
  // The chain links the first generated token to the context's last one.
  const TokenLayout layout{kActionDim, 2, /*observation_deltas=*/true};
  const ObservationChain chain(layout, Normalizer(torch::zeros({5}), torch::ones({5})));
  for (CacheMode mode : {CacheMode::kExact, CacheMode::kNone}) {
    RolloutOptions options = Options(mode);
    options.chain = &chain;
    OpenLoopRollout untouched(*model, schedule, kActionDim, options);
    const torch::Tensor expected = Roll(untouched, context, 8);
    OpenLoopRollout rollout(*model, schedule, kActionDim, options);
    const torch::Tensor owned = context.clone();
    rollout.Reset(owned);
    owned.fill_(std::numeric_limits<float>::quiet_NaN());  // the caller reuses its buffer
    torch::manual_seed(99);  // Roll's actions
    std::vector<torch::Tensor> out;
    for (int done = 0; done < 8; done += rollout.options().chunk) {
      out.push_back(rollout.Next(torch::randn({rollout.options().chunk, kActionDim})));
    }
    EXPECT_TRUE(torch::equal(torch::cat(out), expected)) << "cache mode " << static_cast<int>(mode);
  }
}

TEST(OpenLoopRolloutTest, KeptStateIsTheSameAfter50And500Tokens) {
  torch::NoGradGuard no_grad;
  DfTransformer model = TinyModel();  // max_positions 128
  const NoiseSchedule schedule;
  for (CacheMode mode : {CacheMode::kExact, CacheMode::kNone}) {
    OpenLoopRollout rollout(*model, schedule, kActionDim, Options(mode, /*history=*/16));
    rollout.Reset(torch::randn({8, 5}));
    std::vector<int64_t> bytes;
    std::vector<int> history;
    while (rollout.generated() < 500) {
      const torch::Tensor tokens = rollout.Next(torch::randn({4, kActionDim}));
      ASSERT_TRUE(torch::isfinite(tokens).all().item<bool>()) << rollout.generated();
      if (rollout.generated() == 52 || rollout.generated() == 500) {
        bytes.push_back(rollout.StateBytes());
        history.push_back(rollout.history_size());
      }
    }
    ASSERT_EQ(bytes.size(), 2u);
    EXPECT_EQ(bytes[0], bytes[1]) << CacheModeName(mode);
    EXPECT_EQ(history[0], 16) << CacheModeName(mode);
    EXPECT_EQ(history[1], 16) << CacheModeName(mode);
  }
}

TEST(OpenLoopRolloutTest, LongContextIsReadInPiecesWithinTheWindow) {
  torch::NoGradGuard no_grad;
  DfTransformer model = TinyModel();  // max_positions 128
  const NoiseSchedule schedule;
  OpenLoopRollout rollout(*model, schedule, kActionDim, Options(CacheMode::kExact, 100));
  // 300 tokens in one forward would attend beyond 128 positions and throw.
  rollout.Reset(torch::randn({300, 5}));
  EXPECT_EQ(rollout.history_size(), 100);
  EXPECT_EQ(rollout.Next(torch::randn({4, kActionDim})).size(0), 4);
}

TEST(OpenLoopRolloutTest, BadOptionsAndInputsAreClearErrors) {
  torch::NoGradGuard no_grad;
  DfTransformer model = TinyModel();
  const NoiseSchedule schedule;
  auto make = [&](RolloutOptions options) {
    OpenLoopRollout rollout(*model, schedule, kActionDim, options);
  };
  RolloutOptions options = Options(CacheMode::kExact);
  options.chunk = 0;
  EXPECT_THROW(make(options), std::invalid_argument);
  options = Options(CacheMode::kExact, /*history=*/126);  // + chunk 4 > 128
  EXPECT_THROW(make(options), std::invalid_argument);
  options = Options(CacheMode::kExact);
  options.num_sinks = options.history;
  EXPECT_THROW(make(options), std::invalid_argument);

  OpenLoopRollout rollout(*model, schedule, kActionDim, Options(CacheMode::kExact));
  EXPECT_THROW(rollout.Next(torch::zeros({1, kActionDim})), std::logic_error);
  EXPECT_THROW(rollout.Reset(torch::zeros({0, 5})), std::invalid_argument);
  EXPECT_THROW(rollout.Reset(torch::zeros({3, 4})), std::invalid_argument);
  torch::Tensor nan_context = torch::zeros({3, 5});
  nan_context[1][2] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_THROW(rollout.Reset(nan_context), std::invalid_argument);
  rollout.Reset(torch::zeros({3, 5}));
  EXPECT_THROW(rollout.Next(torch::zeros({5, kActionDim})), std::invalid_argument);  // > chunk
  EXPECT_THROW(rollout.Next(torch::zeros({2, 2})), std::invalid_argument);
  torch::Tensor nan_actions = torch::zeros({2, kActionDim});
  nan_actions[0][0] = std::numeric_limits<float>::infinity();
  EXPECT_THROW(rollout.Next(nan_actions), std::invalid_argument);
  // A failed call leaves the rollout usable.
  EXPECT_EQ(rollout.Next(torch::zeros({2, kActionDim})).size(0), 2);
}

}  // namespace
}  // namespace dfmpc::worldmodel
