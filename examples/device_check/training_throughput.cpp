#include "training_throughput.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <vector>

#include "dfmpc/worldmodel/device.h"
#include "dfmpc/worldmodel/noise_schedule.h"
#include "dfmpc/worldmodel/trainer.h"

namespace dfmpc::device_check {
namespace {

constexpr int kWarmupSteps = 5;

// Tokens [a_{t-1}, x_t, v_t] of an oscillator x'' = -x - 0.1 x' + a over
// `length` steps of 0.1 s, the actions uniform in [-1, 1].
at::Tensor Oscillator(int length, at::Generator& generator) {
  const at::Tensor actions = at::rand({length}, generator, at::kDouble) * 2 - 1;
  const at::Tensor start = at::randn({2}, generator, at::kDouble);
  std::vector<double> tokens;
  double x = start[0].item<double>(), v = start[1].item<double>(), a = 0.0;
  for (int t = 0; t < length; ++t) {
    tokens.insert(tokens.end(), {a, x, v});
    a = actions[t].item<double>();
    v += 0.1 * (-x - 0.1 * v + a);
    x += 0.1 * v;
  }
  return at::tensor(tokens, at::kDouble).view({length, 3}).to(at::kFloat);
}

}  // namespace

TrainingResult MeasureTraining(const TrainingRequest& request) {
  at::Generator generator = at::detail::createCPUGenerator(0);
  std::vector<at::Tensor> train, validation;
  for (int i = 0; i < 32; ++i) train.push_back(Oscillator(4 * request.window, generator));
  for (int i = 0; i < 4; ++i) validation.push_back(Oscillator(4 * request.window, generator));

  worldmodel::TransformerConfig config = request.config;
  config.token_dim = 3;
  config.max_positions = request.window;
  worldmodel::TrainerOptions options;
  options.steps = request.steps;
  options.batch_size = request.batch;
  options.window = request.window;
  options.warmup_steps = 0;
  options.validate_every = request.steps;
  options.checkpoint_every = request.steps;
  options.validation_windows = 64;
  options.device = worldmodel::ParseDevice(request.device);
  options.mixed_precision = request.mixed_precision;
  const worldmodel::NoiseSchedule schedule;
  worldmodel::Trainer trainer(config, schedule, options, train, validation);

  using Clock = std::chrono::steady_clock;
  Clock::time_point timed_start, timed_end;
  trainer.Run(
      (std::filesystem::temp_directory_path() / "dfmpc_device_check.state").string(), false,
      [&](const worldmodel::TrainProgress& progress) {
        // Each step ends with the loss read back, so the GPU is idle here.
        if (progress.step == kWarmupSteps) timed_start = Clock::now();
        if (progress.step == progress.total_steps) timed_end = Clock::now();
      },
      nullptr);
  std::filesystem::remove(std::filesystem::temp_directory_path() / "dfmpc_device_check.state");

  TrainingResult result;
  const double seconds = std::chrono::duration<double>(timed_end - timed_start).count();
  result.tokens_per_second =
      static_cast<double>(request.steps - kWarmupSteps) * request.batch * request.window / seconds;
  result.validation_loss = trainer.log().back().validation_loss;
  for (const auto& parameter : trainer.ema_model().parameters()) {
    result.parameters += parameter.numel();
  }
  return result;
}

}  // namespace dfmpc::device_check
