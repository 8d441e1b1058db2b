// Data-parallel training in one test process: each rank is a thread with a
// Trainer and a c10d process group of its own, meeting at a local TCP store.
#ifndef DFMPC_TESTS_WORLDMODEL_DATA_PARALLEL_TESTING_H_
#define DFMPC_TESTS_WORLDMODEL_DATA_PARALLEL_TESTING_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <torch/types.h>
#include <torch/utils.h>
#include <unistd.h>

#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "dfmpc/worldmodel/noise_schedule.h"
#include "dfmpc/worldmodel/trainer.h"

namespace dfmpc::worldmodel::testing {

// A port nobody listens on right now.
inline int FreePort() {
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

// The EMA weights of a trainer, concatenated, on the CPU.
inline at::Tensor Weights(Trainer& trainer) {
  std::vector<at::Tensor> flat;
  for (const auto& p : trainer.ema_model().parameters()) flat.push_back(p.detach().flatten());
  return torch::cat(flat).cpu();
}

struct RankResult {
  at::Tensor weights;
  double last_train_loss = 0.0;
  std::string error;  // empty when the rank finished
};

// Trains `world` ranks of `options` at once (state files `state_prefix`_r).
inline std::vector<RankResult> TrainRanks(const TransformerConfig& config,
                                          const NoiseSchedule& schedule, TrainerOptions options,
                                          const std::vector<at::Tensor>& train,
                                          const std::vector<at::Tensor>& validation, int world,
                                          const std::string& state_prefix) {
  options.data_parallel.world_size = world;
  options.data_parallel.store_port = FreePort();
  options.data_parallel.timeout_seconds = 60;
  std::vector<RankResult> results(world);
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < world; ++rank) {
    ranks.emplace_back([&, rank, options]() mutable {
      try {
        options.data_parallel.rank = rank;
        Trainer trainer(config, schedule, options, train, validation);
        trainer.Run(state_prefix + "_" + std::to_string(rank), false, nullptr, nullptr);
        results[rank].weights = Weights(trainer);
        results[rank].last_train_loss = trainer.log().back().train_loss;
      } catch (const std::exception& e) {
        results[rank].error = e.what();
      }
    });
  }
  for (std::thread& rank : ranks) rank.join();
  return results;
}

}  // namespace dfmpc::worldmodel::testing

#endif  // DFMPC_TESTS_WORLDMODEL_DATA_PARALLEL_TESTING_H_
