// The optimisation loop the world-model trainer and the step distiller
// share (internal): scheduled AdamW (scheduled_adamw.h), an exponential
// moving average (EMA) of the weights,
// the EMA's validation loss logged at intervals, progress, and the state a
// resumed run continues from. What one step's loss is, what happens to the
// gradients before they are clipped, and what a checkpoint writes belong to
// the owner (TrainingLoop::Hooks).
#ifndef DFMPC_WORLDMODEL_SRC_TRAINING_LOOP_H_
#define DFMPC_WORLDMODEL_SRC_TRAINING_LOOP_H_

#include <ATen/core/Tensor.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <functional>
#include <vector>

#include "dfmpc/worldmodel/trainer.h"
#include "dfmpc/worldmodel/transformer.h"
#include "scheduled_adamw.h"
#include "training_windows.h"

namespace dfmpc::worldmodel {

class TrainingLoop {
 public:
  struct Hooks {
    // The loss of one step of `model` (in train mode, its gradients
    // zeroed) on a batch the owner draws.
    std::function<at::Tensor(DfTransformerImpl& model)> loss;
    // After the backward pass, before clipping: the loss to report (data-
    // parallel training sums gradients and loss over the ranks). May be
    // empty.
    std::function<at::Tensor(DfTransformerImpl& model, const at::Tensor& loss)> after_backward;
    // The EMA weights' loss on the owner's fixed validation windows.
    std::function<double(DfTransformerImpl& ema)> validation_loss;
    // Writes the run's state; called every `checkpoint_every` steps and
    // after the last. May be empty.
    std::function<void()> checkpoint;
    // Whether this process writes logs and checkpoints (data-parallel
    // training: rank 0 only).
    bool writes_files = true;
  };

  // `ema` starts as a copy of `model` (same architecture), in eval mode.
  // `settings` holds the optimiser's and the batch's sizes (tokens per step
  // for the throughput); `checkpoint_every` 0: no checkpoints.
  TrainingLoop(DfTransformer model, DfTransformer ema, const WindowTrainingSettings& settings,
               int validate_every, int checkpoint_every);

  // Steps until settings.steps (from where a loaded state left off).
  // `on_progress` after every step; `on_log`, with the whole log, after
  // every validation.
  void Run(const Hooks& hooks, const std::function<void(const TrainProgress&)>& on_progress,
           const std::function<void(const std::vector<TrainLogRow>&)>& on_log);

  // The step, running loss, log, weights, EMA and optimiser state, as
  // records of `archive`.
  void Save(torch::serialize::OutputArchive& archive);
  // What Save wrote. Throws c10::Error for a missing or corrupt record.
  void Load(torch::serialize::InputArchive& archive);

  DfTransformerImpl& model() { return *model_; }
  DfTransformerImpl& ema() { return *ema_; }
  const std::vector<TrainLogRow>& log() const { return log_; }

 private:
  double Step(const Hooks& hooks);

  DfTransformer model_, ema_;
  WindowTrainingSettings settings_;
  int validate_every_, checkpoint_every_;
  ScheduledAdamW optimizer_;
  int step_ = 0;
  double loss_sum_ = 0.0;  // since the last validation
  int loss_count_ = 0;
  std::vector<TrainLogRow> log_;
};

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_SRC_TRAINING_LOOP_H_
