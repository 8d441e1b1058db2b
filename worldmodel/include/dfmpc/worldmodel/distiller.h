// Progressive step distillation (Salimans & Ho, 2022) of a diffusion-forcing
// world model: a student learns to take in one DDIM step of a K / 2-level
// grid the two deterministic steps its teacher takes on the K-level grid, so
// that sampling with the student needs half the model calls. Applied again
// to its own student it halves K again (16 -> 8 -> 4 -> 2).
//
// Every token of a training window gets its own level k of the student's
// grid, as in diffusion forcing: clean (k = 0) with probability clean_prob,
// else uniform in 1..K / 2, or, for a fraction pyramid_prob of the windows,
// the pattern pyramid sampling produces (a clean prefix, then levels rising
// along the tokens). Student level k is teacher level 2k (both map to the
// same training timestep, noise_schedule.h). The teacher takes every noisy
// token from 2k to 2k - 1 and then to 2k - 2 in two calls over the whole
// window; the student's target is the output that makes one DDIM step from
// 2k land on the teacher's result (DistillationTarget), and its loss is the
// mean squared error over the noisy tokens in the model's parameterisation
// (v by default, which the paper recommends). A model with the known-action
// side input (transformer.h) gets each token's clean action through it with
// probability known_action_prob, the teacher and the student alike.
//
// CFG-aware distillation (SnapFusion's, seed 003): an outcome-conditioned
// teacher is distilled into a student that takes the guidance weight as an
// input (transformer.h, max_outcome_guidance), so that guided sampling costs
// one call per level instead of two. Each window draws a target quantile q
// uniform in [0, 1] and a weight w uniform in [0, max_outcome_guidance], or
// no condition with probability outcome_dropout; the teacher's steps are
// then guided, lerp(unconditioned, conditioned on q, w) (two calls, or one
// for a CFG-aware teacher), and the student sees [2 q - 1, 1, w]. Its
// weight column starts at zero, so before training the student is the
// teacher conditioned at w = 1.
//
// The student starts from the teacher's weights; AdamW with warmup and
// cosine decay, gradient clipping, and an EMA of the weights that is
// validated and returned for sampling. Runs on one device, without resume.
#ifndef DFMPC_WORLDMODEL_DISTILLER_H_
#define DFMPC_WORLDMODEL_DISTILLER_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "dfmpc/worldmodel/noise_schedule.h"
#include "dfmpc/worldmodel/optimizer_options.h"
#include "dfmpc/worldmodel/trainer.h"
#include "dfmpc/worldmodel/transformer.h"

namespace dfmpc::worldmodel {

// The optimiser's settings (optimizer_options.h; the seed draws the windows
// and the noise), then the windows'.
struct DistillerOptions : OptimizerOptions {
  DistillerOptions() {
    steps = 2000;
    batch_size = 32;  // windows
    learning_rate = 2e-4;
    min_learning_rate_ratio = 0.1;
    warmup_steps = 100;
    weight_decay = 0.0;
    grad_clip = 1.0;
  }

  int teacher_levels = 16;  // K of the teacher's grid (even); the student samples at K / 2
  int window = 40;          // tokens per window, at most the teacher's training window
  double ema_decay = 0.999;
  double clean_prob = 0.25;
  double pyramid_prob = 0.5;
  double known_action_prob = 0.5;          // models with the known-action input only
  Prediction prediction = Prediction::kV;  // the teacher's parameterisation
  // Outcome-conditioned teachers only: the largest guidance weight the
  // student learns (0: a CFG-aware teacher's own; a teacher without the
  // weight input needs one), and the fraction of windows with no condition.
  double max_outcome_guidance = 0.0;
  double outcome_dropout = 0.2;
  int validate_every = 250;
  int validation_windows = 256;

  // Throws std::invalid_argument naming the first impossible option.
  void Validate() const;
};

// The model output (of kind `prediction`) at the noisy input `x_from` of
// alpha-bar `ab_from` whose deterministic DDIM step to alpha-bar `ab_to`
// gives exactly `x_to`. Needs ab_from < ab_to <= 1 (a step towards clean);
// all four broadcast against each other.
at::Tensor DistillationTarget(Prediction prediction, const at::Tensor& x_from,
                              const at::Tensor& x_to, const at::Tensor& ab_from,
                              const at::Tensor& ab_to);

class Distiller {
 public:
  // `teacher` (not changed; must outlive the distiller) samples on a grid
  // of options.teacher_levels levels of `schedule`. `train` and
  // `validation` are normalized token sequences [T_i, d] of at least
  // options.window tokens, normalized as the teacher's data was. Throws
  // std::invalid_argument for impossible options or data.
  Distiller(DfTransformerImpl& teacher, const NoiseSchedule& schedule,
            const DistillerOptions& options, std::vector<at::Tensor> train,
            std::vector<at::Tensor> validation);
  ~Distiller();

  // Runs options.steps optimizer steps; `on_progress` after each, `on_log`
  // after each validation with the whole log.
  void Run(const std::function<void(const TrainProgress&)>& on_progress,
           const std::function<void(const std::vector<TrainLogRow>&)>& on_log);

  // Loss of the student's EMA weights against the teacher's two steps on
  // fixed validation windows and noise (before Run: the teacher's own
  // one-step loss, since the student starts as the teacher).
  double ValidationLoss();
  // The student's EMA weights, to sample with at teacher_levels / 2. Its
  // config is the teacher's but for max_outcome_guidance.
  DfTransformerImpl& student();
  const std::vector<TrainLogRow>& log() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_DISTILLER_H_
