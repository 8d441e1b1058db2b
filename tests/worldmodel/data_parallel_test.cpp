// Data-parallel training: two ranks (threads of this process, each with its
// own c10d process group over a local TCP store) end where one process with
// the same global batch ends; a rank that never comes is an error, not a
// hang.
#include "dfmpc/worldmodel/data_parallel.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <torch/torch.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "dfmpc/worldmodel/noise_schedule.h"
#include "dfmpc/worldmodel/trainer.h"
#include "tiny_model.h"

namespace dfmpc::worldmodel {
namespace {

constexpr int kTokenDim = 4;

// A port nobody listens on right now.
int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  socklen_t length = sizeof address;
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  close(fd);
  return ntohs(address.sin_port);
}

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

// The EMA weights, concatenated.
at::Tensor Weights(Trainer& trainer) {
  std::vector<at::Tensor> flat;
  for (const auto& p : trainer.ema_model().parameters()) flat.push_back(p.detach().flatten());
  return torch::cat(flat);
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

  const int port = FreePort();
  std::vector<at::Tensor> weights(2);
  std::vector<std::string> errors(2);
  std::vector<double> last_loss(2);
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < 2; ++rank) {
    ranks.emplace_back([&, rank] {
      try {
        TrainerOptions options = Options();
        options.data_parallel.world_size = 2;
        options.data_parallel.rank = rank;
        options.data_parallel.store_port = port;
        options.data_parallel.timeout_seconds = 60;
        Trainer trainer(config, schedule, options, train, validation);
        trainer.Run(StatePath("rank" + std::to_string(rank)), false, nullptr, nullptr);
        weights[rank] = Weights(trainer);
        last_loss[rank] = trainer.log().back().train_loss;
      } catch (const std::exception& e) {
        errors[rank] = e.what();
      }
    });
  }
  for (std::thread& rank : ranks) rank.join();
  ASSERT_EQ(errors[0], "");
  ASSERT_EQ(errors[1], "");
  // Both ranks hold the same weights...
  EXPECT_TRUE(torch::equal(weights[0], weights[1]));
  // ...those of one process with the global batch, up to the order in which
  // the two halves' float sums were added (12 AdamW steps).
  EXPECT_LE((weights[0] - Weights(alone)).abs().max().item<double>(), 1e-5);
  EXPECT_NEAR(last_loss[0], alone.log().back().train_loss, 1e-5);
  // Only rank 0 writes the resume state.
  EXPECT_TRUE(std::filesystem::exists(StatePath("rank0")));
  EXPECT_FALSE(std::filesystem::exists(StatePath("rank1")));
  for (const char* name : {"alone", "rank0"}) std::filesystem::remove(StatePath(name));
}

TEST(DataParallelTest, ARankThatNeverComesIsAnErrorWithinTheTimeout) {
  const NoiseSchedule schedule;
  TransformerConfig config = testing::TinyConfig(kTokenDim);
  config.max_positions = 12;
  TrainerOptions options = Options();
  options.data_parallel.world_size = 2;
  options.data_parallel.rank = 0;  // serves the store; rank 1 never comes
  options.data_parallel.store_port = FreePort();
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
