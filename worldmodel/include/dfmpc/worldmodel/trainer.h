// Training a diffusion-forcing transformer on token sequences.
//
// Each step samples windows of L tokens from the training episodes and draws
// an independent noise level per token (diffusion forcing): clean with
// probability clean_prob (so the model learns to read clean context, as in
// sampling), else a training timestep (uniform by default). A fraction pyramid_prob of the
// windows get the pattern the pyramid samples with instead (clean prefix,
// then noise rising along the tokens). The loss is the mean squared
// error of the prediction target (v by default) over the noisy tokens.
// AdamW with linear warmup and cosine decay, gradient clipping, and an EMA of
// the weights that is used for validation and saved for sampling.
//
// A model with the outcome input (transformer.h) learns generation
// conditioned on each window's outcome: the mean reward of its tokens, as
// its quantile among the training windows (0 the worst, 1 the best); a
// fraction outcome_dropout of the windows get no condition, so that one
// model is both the conditioned and the unconditioned model classifier-free
// guidance combines.
//
// Training is resumable: every checkpoint_every steps the full state
// (weights, EMA, optimizer, step, random generators, log) is written
// atomically to the state file, so a run killed at any moment continues from
// the last state with the same loss trajectory as an uninterrupted run.
//
// Data-parallel training (data_parallel.h) splits every batch over several
// processes; batch_size is then the global batch, and rank 0 alone writes
// the state file and gets on_log.
#ifndef DFMPC_WORLDMODEL_TRAINER_H_
#define DFMPC_WORLDMODEL_TRAINER_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dfmpc/worldmodel/data_parallel.h"
#include "dfmpc/worldmodel/noise_schedule.h"
#include "dfmpc/worldmodel/optimizer_options.h"
#include "dfmpc/worldmodel/sensor_noise.h"
#include "dfmpc/worldmodel/transformer.h"

namespace dfmpc::worldmodel {

// The optimiser's settings (optimizer_options.h; the seed also draws the
// initial weights and the noise), then the windows'.
struct TrainerOptions : OptimizerOptions {
  TrainerOptions() {
    steps = 10000;
    batch_size = 32;  // windows
    learning_rate = 1e-3;
    min_learning_rate_ratio = 0.1;
    warmup_steps = 200;
    weight_decay = 0.01;
    grad_clip = 1.0;
  }

  int window = 40;  // tokens per training window (L)
  double ema_decay = 0.999;
  double clean_prob = 0.25;  // probability that a training token is clean
  // Noisy tokens get timestep floor(T v^power), v uniform: 1 is uniform,
  // larger values train low noise levels, where the last sampling calls
  // settle the details, more often.
  double timestep_power = 1.0;
  // For a model with the known-action input (transformer.h): probability
  // that a training token's clean action is given through it.
  double known_action_prob = 0.5;
  // Probability that a window instead gets the pattern pyramid sampling
  // produces: a clean prefix, then noise rising along the tokens.
  double pyramid_prob = 0.0;
  // For a model with the outcome input: probability that a window gets no
  // outcome condition.
  double outcome_dropout = 0.2;
  // For a model with the outcome input: 0 makes a window's outcome its mean
  // reward; k > 0 its advantage, the mean reward less that of the windows
  // the k other sequences nearest to its first token began there with.
  int outcome_baseline_neighbours = 0;
  // The baseline compares first tokens by their features from this one on
  // (the observation's: the layout's actions come first).
  int outcome_state_feature = 0;
  // Observation noise on the clean (context) tokens of every window
  // (sensor_noise.h); off by default.
  SensorNoise sensor_noise;
  Prediction prediction = Prediction::kV;
  int validate_every = 250;
  int validation_windows = 256;  // fixed windows, fixed noise: comparable over time
  int checkpoint_every = 250;
  // Where the model trains. Batches are drawn on the CPU whatever the
  // device, so a seed gives the same windows and noise everywhere; the
  // arithmetic (and so the loss curve) differs by rounding only. The resume
  // state loads onto any device.
  c10::Device device = c10::Device(c10::kCPU);
  // bf16 autocast of the forward pass (CUDA only): matrix products in bf16,
  // weights, optimizer and loss in float.
  bool mixed_precision = false;
  // Several processes sharing every batch (batch_size must divide evenly).
  DataParallelOptions data_parallel;

  // Throws std::invalid_argument naming the first impossible option.
  void Validate() const;
};

struct TrainLogRow {
  int step = 0;
  double train_loss = 0.0;       // mean over the steps since the previous row
  double validation_loss = 0.0;  // EMA weights on the validation windows
  double learning_rate = 0.0;
  double tokens_per_second = 0.0;
};

struct TrainProgress {
  int step = 0;
  int total_steps = 0;
  double loss = 0.0;  // running mean of recent steps
  double tokens_per_second = 0.0;
};

class Trainer {
 public:
  // `train` and `validation` are normalized token sequences [T_i, d]; every
  // sequence must hold at least `window` tokens. A model with the outcome
  // input needs, and only it takes, their rewards: one [T_i] float tensor
  // per sequence, token t's the reward of the step that led to its
  // observation. The schedule must outlive the trainer.
  Trainer(const TransformerConfig& config, const NoiseSchedule& schedule,
          const TrainerOptions& options, std::vector<at::Tensor> train,
          std::vector<at::Tensor> validation, std::vector<at::Tensor> train_rewards = {},
          std::vector<at::Tensor> validation_rewards = {});
  ~Trainer();

  // Runs until options.steps. With resume, the state at `state_path` is
  // loaded first (error if missing or from a different configuration).
  // `on_progress` is called after every step, `on_log` after every
  // validation with the whole log so far (on rank 0 only).
  void Run(const std::string& state_path, bool resume,
           const std::function<void(const TrainProgress&)>& on_progress,
           const std::function<void(const std::vector<TrainLogRow>&)>& on_log);

  // Loss of the EMA weights on the fixed validation windows.
  double ValidationLoss();
  // The EMA weights, for sampling and saving.
  DfTransformerImpl& ema_model();
  const std::vector<TrainLogRow>& log() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_TRAINER_H_
