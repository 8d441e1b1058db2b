// Data-parallel training: two ranks (threads of this process, each with its
// own c10d process group over a local TCP store) end where one process with
// the same global batch ends; a rank that never comes is an error, not a
// hang.
#include "dfmpc/worldmodel/data_parallel.h"

#include <gtest/gtest.h>
#include <torch/types.h>
#include <torch/utils.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "data_parallel_testing.h"
#include "dfmpc/worldmodel/noise_schedule.h"
#include "dfmpc/worldmodel/trainer.h"
#include "tiny_model.h"

namespace dfmpc::worldmodel {
namespace {

constexpr int kTokenDim = 4;

std::vector<at::Tensor> Walks(int count, int seed) {
  torch::manual_seed(seed);
  std::vector<at::Tensor> walks;
  for (int i = 0; i < count; ++i) walks.push_back(torch::randn({40, kTokenDim}).cumsum(0) * 0.1);
  return walks;
}

TrainerOptions Options() {
  TrainerOptions options;
  options.steps = 12;
  options.batch_size = 8;
  options.window = 12;
  options.warmup_steps = 2;
  options.validate_every = 6;
  options.checkpoint_every = 12;
  options.validation_windows = 16;
  return options;
}

std::string StatePath(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("dfmpc_dp_" + name + "_" + std::to_string(::getpid()) + ".state"))
      .string();
}

TEST(DataParallelTest, OptionsAreChecked) {
  DataParallelOptions options;
  options.world_size = 2;
  options.rank = 2;
  EXPECT_THROW(options.Validate(), std::invalid_argument);
  options.rank = 1;
  options.store_port = 70000;
  EXPECT_THROW(options.Validate(), std::invalid_argument);
  TrainerOptions trainer;
  trainer.batch_size = 7;
  trainer.data_parallel.world_size = 2;
  EXPECT_THROW(trainer.Validate(), std::invalid_argument);  // 7 windows over 2 ranks
}

TEST(DataParallelTest, TwoRanksEqualOneProcessWithTheGlobalBatch) {
  const NoiseSchedule schedule;
  TransformerConfig config = testing::TinyConfig(kTokenDim);
  config.max_positions = 12;
  const auto train = Walks(6, 1), validation = Walks(2, 2);

  Trainer alone(config, schedule, Options(), train, validation);
  alone.Run(StatePath("alone"), false, nullptr, nullptr);

  const std::vector<testing::RankResult> ranks =
      testing::TrainRanks(config, schedule, Options(), train, validation, 2, StatePath("rank"));
  ASSERT_EQ(ranks[0].error, "");
  ASSERT_EQ(ranks[1].error, "");
  // Both ranks hold the same weights...
  EXPECT_TRUE(torch::equal(ranks[0].weights, ranks[1].weights));
  // ...those of one process with the global batch, up to the order in which
  // the two halves' float sums were added (12 AdamW steps).
  EXPECT_LE((ranks[0].weights - testing::Weights(alone)).abs().max().item<double>(), 1e-5);
  EXPECT_NEAR(ranks[0].last_train_loss, alone.log().back().train_loss, 1e-5);
  // Only rank 0 writes the resume state.
  EXPECT_TRUE(std::filesystem::exists(StatePath("rank") + "_0"));
  EXPECT_FALSE(std::filesystem::exists(StatePath("rank") + "_1"));
  std::filesystem::remove(StatePath("alone"));
  std::filesystem::remove(StatePath("rank") + "_0");
}

TEST(DataParallelTest, ARankThatNeverComesIsAnErrorWithinTheTimeout) {
  const NoiseSchedule schedule;
  TransformerConfig config = testing::TinyConfig(kTokenDim);
  config.max_positions = 12;
  TrainerOptions options = Options();
  options.data_parallel.world_size = 2;
  options.data_parallel.rank = 0;  // serves the store; rank 1 never comes
  options.data_parallel.store_port = testing::FreePort();
  options.data_parallel.timeout_seconds = 2;
  const auto start = std::chrono::steady_clock::now();
  try {
    Trainer trainer(config, schedule, options, Walks(6, 1), Walks(2, 2));
    FAIL() << "a group of 2 formed with one rank";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("did not meet"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
}

}  // namespace
}  // namespace dfmpc::worldmodel
