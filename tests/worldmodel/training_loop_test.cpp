// The loop the trainer and the distiller share (training_loop.h): when it
// validates, logs and checkpoints, the rate it reports, and the EMA it
// keeps. Its saved state is tested through the trainer's resume
// (trainer_test.cpp).
#include "training_loop.h"

#include <gtest/gtest.h>
#include <torch/types.h>

#include <vector>

#include "learning_rate.h"
#include "tiny_model.h"

namespace dfmpc::worldmodel {
namespace {

using testing::TinyConfig;
using testing::TinyModel;

WindowTrainingSettings Settings(int steps) {
  WindowTrainingSettings settings{};
  settings.optimizer.steps = steps;
  settings.optimizer.batch_size = 2;
  settings.window = 4;
  settings.optimizer.learning_rate = 1e-2;
  settings.optimizer.min_learning_rate_ratio = 0.1;
  settings.optimizer.warmup_steps = 2;
  settings.optimizer.grad_clip = 1.0;
  settings.ema_decay = 0.9;
  return settings;
}

// What a run's hooks were asked.
struct Calls {
  std::vector<int> checkpoints;  // the loop's step count at each
  int losses = 0;
};

// The squared outputs on fixed windows as the loss: any loss with
// gradients will do.
TrainingLoop::Hooks SquaredOutputs(TrainingLoop& loop, Calls& calls, bool writes_files) {
  const at::Tensor tokens = torch::randn({2, 4, TinyConfig().token_dim});
  const at::Tensor timesteps = torch::full({2, 4}, 500, torch::kLong);
  TrainingLoop::Hooks hooks;
  hooks.loss = [&calls, tokens, timesteps](DfTransformerImpl& model) {
    ++calls.losses;
    EXPECT_TRUE(model.is_training());
    return model.Forward(tokens, timesteps, nullptr).pow(2).mean();
  };
  hooks.validation_loss = [tokens, timesteps](DfTransformerImpl& ema) {
    EXPECT_FALSE(ema.is_training());
    torch::NoGradGuard no_grad;
    return ema.Forward(tokens, timesteps, nullptr).pow(2).mean().item<double>();
  };
  hooks.checkpoint = [&calls, &loop] { calls.checkpoints.push_back(loop.log().back().step); };
  hooks.writes_files = writes_files;
  return hooks;
}

TEST(TrainingLoopTest, ValidatesAndCheckpointsAtTheirIntervalsAndAfterTheLastStep) {
  TrainingLoop loop(TinyModel(), TinyModel(), Settings(7), /*validate_every=*/3,
                    /*checkpoint_every=*/3);
  Calls calls;
  int logs = 0, progress = 0;
  loop.Run(
      SquaredOutputs(loop, calls, /*writes_files=*/true),
      [&](const TrainProgress& p) { EXPECT_EQ(p.step, ++progress); },
      [&](const std::vector<TrainLogRow>& log) { EXPECT_EQ(log.size(), ++logs); });
  EXPECT_EQ(calls.losses, 7);
  EXPECT_EQ(progress, 7);
  ASSERT_EQ(loop.log().size(), 3u);
  EXPECT_EQ(logs, 3);
  EXPECT_EQ(calls.checkpoints, (std::vector<int>{3, 6, 7}));
  for (const TrainLogRow& row : loop.log()) {
    // The rate of the row's last step (0-based step - 1).
    EXPECT_DOUBLE_EQ(row.learning_rate, WarmupCosineLearningRate(row.step - 1, 7, 2, 1e-2, 0.1));
    EXPECT_GT(row.tokens_per_second, 0.0);
  }
  EXPECT_LT(loop.log().back().validation_loss, loop.log().front().validation_loss);
}

TEST(TrainingLoopTest, AProcessThatWritesNoFilesNeitherLogsNorCheckpoints) {
  TrainingLoop loop(TinyModel(), TinyModel(), Settings(4), 2, 2);
  Calls calls;
  int logs = 0;
  loop.Run(SquaredOutputs(loop, calls, /*writes_files=*/false), nullptr,
           [&](const std::vector<TrainLogRow>&) { ++logs; });
  EXPECT_EQ(logs, 0);
  EXPECT_TRUE(calls.checkpoints.empty());
  EXPECT_EQ(loop.log().size(), 2u);  // the log is kept all the same
}

TEST(TrainingLoopTest, TheEmaStartsAsTheModelAndLagsBehindIt) {
  TrainingLoop loop(TinyModel(5, 1), TinyModel(5, 2), Settings(5), 5, 0);
  const auto parameters = [](DfTransformerImpl& m) {
    std::vector<at::Tensor> flat;
    for (const at::Tensor& p : m.parameters()) flat.push_back(p.detach().flatten());
    return torch::cat(flat).clone();
  };
  const at::Tensor start = parameters(loop.model());
  EXPECT_TRUE(torch::equal(parameters(loop.ema()), start));  // not the second model's weights
  Calls calls;
  loop.Run(SquaredOutputs(loop, calls, true), nullptr, nullptr);
  const double model_moved = (parameters(loop.model()) - start).norm().item<double>();
  const double ema_moved = (parameters(loop.ema()) - start).norm().item<double>();
  EXPECT_GT(ema_moved, 0.0);
  EXPECT_LT(ema_moved, model_moved);
}

}  // namespace
}  // namespace dfmpc::worldmodel
