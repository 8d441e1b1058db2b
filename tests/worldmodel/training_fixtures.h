// Toy episodes the world-model training tests learn from, and options that
// learn them in seconds.
#ifndef DFMPC_TESTS_WORLDMODEL_TRAINING_FIXTURES_H_
#define DFMPC_TESTS_WORLDMODEL_TRAINING_FIXTURES_H_

#include <torch/types.h>
#include <torch/utils.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "dfmpc/worldmodel/distiller.h"
#include "dfmpc/worldmodel/trainer.h"

namespace dfmpc::worldmodel::testing {

// Episodes of a damped oscillator driven by random actions: tokens
// [a_{t-1}, cos(angle), sin(angle), velocity], learnable but not trivial.
// Seeds the global generator.
inline std::vector<at::Tensor> OscillatorEpisodes(int count, int length, uint64_t seed) {
  torch::manual_seed(seed);
  std::vector<at::Tensor> episodes;
  for (int e = 0; e < count; ++e) {
    std::vector<float> data;
    double angle = torch::rand({1}).item<double>() * 6.28, velocity = 0.0, action = 0.0;
    for (int t = 0; t < length; ++t) {
      data.insert(data.end(), {static_cast<float>(action), static_cast<float>(std::cos(angle)),
                               static_cast<float>(std::sin(angle)), static_cast<float>(velocity)});
      action = torch::rand({1}).item<double>() * 2 - 1;
      velocity += 0.1 * (action - std::sin(angle)) - 0.02 * velocity;
      angle += 0.1 * velocity;
    }
    episodes.push_back(torch::tensor(data).view({length, 4}));
  }
  return episodes;
}

// A tiny model learns the oscillator with these in a few hundred steps.
inline TrainerOptions FastTrainerOptions(int steps) {
  TrainerOptions options;
  options.steps = steps;
  options.batch_size = 16;
  options.window = 8;
  options.learning_rate = 3e-3;
  options.warmup_steps = 20;
  options.ema_decay = 0.95;
  options.validate_every = 20;
  options.checkpoint_every = 20;
  options.validation_windows = 64;
  options.seed = 3;
  return options;
}

// A tiny teacher's student learns two of its steps in one with these in
// a few hundred steps.
inline DistillerOptions FastDistillerOptions(int steps) {
  DistillerOptions options;
  options.teacher_levels = 16;
  options.steps = steps;
  options.batch_size = 16;
  options.window = 12;
  options.learning_rate = 1e-3;
  options.warmup_steps = 20;
  options.ema_decay = 0.95;
  options.validate_every = 50;
  options.validation_windows = 64;
  options.seed = 5;
  return options;
}

// Episodes whose tokens all sit near one level, uniform in [-1, 1], which
// is also their reward: a model trained with the outcome condition
// generates high tokens for a high quantile and low ones for a low
// quantile, the unconditioned model in between. Seeds the global generator.
struct LeveledEpisodes {
  std::vector<at::Tensor> tokens, rewards;
};

inline LeveledEpisodes MakeLeveledEpisodes(int count, int length, uint64_t seed,
                                           int token_dim = 4) {
  torch::manual_seed(seed);
  LeveledEpisodes episodes;
  for (int e = 0; e < count; ++e) {
    const double level = torch::rand({1}).item<double>() * 2 - 1;
    episodes.tokens.push_back(level + 0.05 * torch::randn({length, token_dim}));
    episodes.rewards.push_back(torch::full({length}, static_cast<float>(level)));
  }
  return episodes;
}

}  // namespace dfmpc::worldmodel::testing

#endif  // DFMPC_TESTS_WORLDMODEL_TRAINING_FIXTURES_H_
