// Training on a GPU: the loss falls, the first step matches the CPU's, bf16
// autocast trains, and what a GPU trains plans on the CPU and resumes there.
#include <gtest/gtest.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <unistd.h>

#include <ATen/CPUGeneratorImpl.h>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "cuda_testing.h"
#include "data_parallel_testing.h"
#include "dfmpc/worldmodel/checkpoint.h"
#include "dfmpc/worldmodel/noise_schedule.h"
#include "dfmpc/worldmodel/trainer.h"
#include "tiny_model.h"

namespace dfmpc::worldmodel {
namespace {

constexpr int kTokenDim = 4;

// Smooth sequences [T, d] (sines of random phase and speed): learnable.
std::vector<at::Tensor> Sequences(int count, uint64_t seed) {
  at::Generator generator = at::detail::createCPUGenerator(seed);
  std::vector<at::Tensor> sequences;
  for (int i = 0; i < count; ++i) {
    const at::Tensor phase = at::rand({1, kTokenDim}, generator) * 6.28;
    const at::Tensor speed = 0.05 + at::rand({1, kTokenDim}, generator) * 0.2;
    const at::Tensor t = at::arange(48, at::kFloat).unsqueeze(1);
    sequences.push_back(at::sin(phase + speed * t));
  }
  return sequences;
}

TrainerOptions Small(c10::Device device, int steps) {
  TrainerOptions options;
  options.steps = steps;
  options.batch_size = 8;
  options.window = 16;
  options.warmup_steps = 5;
  options.validate_every = steps;
  options.checkpoint_every = 5;
  options.validation_windows = 32;
  options.device = device;
  return options;
}

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("dfmpc_cuda_" + name + "_" + std::to_string(::getpid())))
      .string();
}

TEST(CudaTrainingTest, MixedPrecisionIsRefusedOffCuda) {
  TrainerOptions options = Small(c10::Device(c10::kCPU), 10);
  options.mixed_precision = true;
  EXPECT_THROW(options.Validate(), std::invalid_argument);
}

TEST(CudaTrainingTest, TheFirstStepOnTheGpuMatchesTheCpus) {
  DFMPC_SKIP_WITHOUT_CUDA();
  const NoiseSchedule schedule;
  TransformerConfig config = testing::TinyConfig(kTokenDim);
  config.max_positions = 16;
  double losses[2];
  for (int gpu = 0; gpu < 2; ++gpu) {
    Trainer trainer(config, schedule,
                    Small(gpu ? c10::Device(c10::kCUDA) : c10::Device(c10::kCPU), 1),
                    Sequences(6, 1), Sequences(2, 2));
    trainer.Run(TempPath("first_step") + ".state", false, nullptr, nullptr);
    losses[gpu] = trainer.log().back().train_loss;
  }
  // Same weights, same batch (drawn on the CPU); float rounding differs.
  EXPECT_NEAR(losses[1], losses[0], 1e-4 * losses[0]);
}

TEST(CudaTrainingTest, TrainsOnTheGpuThenPlansAndResumesOnTheCpu) {
  DFMPC_SKIP_WITHOUT_CUDA();
  const NoiseSchedule schedule;
  TransformerConfig config = testing::TinyConfig(kTokenDim);
  config.max_positions = 16;
  const std::string state = TempPath("resume") + ".state";
  Trainer gpu(config, schedule, Small(c10::Device(c10::kCUDA), 60), Sequences(6, 1),
              Sequences(2, 2));
  const double before = gpu.ValidationLoss();
  gpu.Run(state, false, nullptr, nullptr);
  EXPECT_LT(gpu.log().back().validation_loss, 0.7 * before);

  // The model file holds the weights wherever they trained.
  const std::string model = TempPath("model") + ".pt";
  ModelInfo info;
  info.task = "sines";
  info.layout.action_dim = 1;
  info.layout.observation_dim = kTokenDim - 1;
  info.config = config;
  SaveCheckpoint(model, info, Normalizer::Fit(Sequences(2, 3)), gpu.ema_model());
  Checkpoint loaded = LoadCheckpoint(model);
  const at::Tensor tokens = at::randn({2, 8, kTokenDim});
  const at::Tensor steps = at::full({8}, 100, at::kLong);
  {
    torch::NoGradGuard no_grad;
    const at::Tensor on_cpu = loaded.model->Forward(tokens, steps, nullptr);
    const at::Tensor on_gpu = gpu.ema_model().Forward(tokens.cuda(), steps, nullptr).cpu();
    EXPECT_LE((on_cpu - on_gpu).abs().max().item<double>(), 1e-4);
  }

  // The GPU's resume state continues on the CPU.
  Trainer cpu(config, schedule, Small(c10::Device(c10::kCPU), 70), Sequences(6, 1),
              Sequences(2, 2));
  cpu.Run(state, /*resume=*/true, nullptr, nullptr);
  EXPECT_EQ(cpu.log().back().step, 70);
  std::filesystem::remove(state);
  std::filesystem::remove(model);
}

TEST(CudaTrainingTest, Bf16AutocastTrains) {
  DFMPC_SKIP_WITHOUT_CUDA();
  const NoiseSchedule schedule;
  TransformerConfig config = testing::TinyConfig(kTokenDim);
  config.max_positions = 16;
  TrainerOptions options = Small(c10::Device(c10::kCUDA), 60);
  options.mixed_precision = true;
  Trainer trainer(config, schedule, options, Sequences(6, 1), Sequences(2, 2));
  const double before = trainer.ValidationLoss();
  const std::string state = TempPath("bf16") + ".state";
  trainer.Run(state, false, nullptr, nullptr);
  EXPECT_LT(trainer.log().back().validation_loss, 0.7 * before);
  std::filesystem::remove(state);
}

TEST(CudaTrainingTest, TwoRanksOnTheGpuEqualOneProcessWithTheGlobalBatch) {
  DFMPC_SKIP_WITHOUT_CUDA();
  const NoiseSchedule schedule;
  TransformerConfig config = testing::TinyConfig(kTokenDim);
  config.max_positions = 16;
  const TrainerOptions options = Small(c10::Device(c10::kCUDA), 12);
  const auto train = Sequences(6, 1), validation = Sequences(2, 2);
  Trainer alone(config, schedule, options, train, validation);
  alone.Run(TempPath("alone") + ".state", false, nullptr, nullptr);
  // Gloo sums the CUDA gradients (both ranks share this one GPU).
  const std::vector<testing::RankResult> ranks =
      testing::TrainRanks(config, schedule, options, train, validation, 2, TempPath("ranks"));
  if (ranks[0].error.find("not built in") != std::string::npos) {
    GTEST_SKIP() << ranks[0].error;  // this LibTorch came without usable Gloo headers
  }
  ASSERT_EQ(ranks[0].error, "");
  ASSERT_EQ(ranks[1].error, "");
  EXPECT_TRUE(torch::equal(ranks[0].weights, ranks[1].weights));
  EXPECT_LE((ranks[0].weights - testing::Weights(alone)).abs().max().item<double>(), 1e-5);
  std::filesystem::remove(TempPath("alone") + ".state");
  std::filesystem::remove(TempPath("ranks") + "_0");
}

}  // namespace
}  // namespace dfmpc::worldmodel
