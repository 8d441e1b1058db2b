// AdamW on the schedule of OptimizerOptions (internal): the one optimiser
// step of every training run, so that warm-up, decay and clipping mean the
// same everywhere.
#ifndef DFMPC_WORLDMODEL_SRC_SCHEDULED_ADAMW_H_
#define DFMPC_WORLDMODEL_SRC_SCHEDULED_ADAMW_H_

#include <ATen/core/Tensor.h>
#include <torch/optim/adamw.h>

#include <functional>
#include <vector>

#include "dfmpc/worldmodel/optimizer_options.h"

namespace dfmpc::worldmodel {

class ScheduledAdamW {
 public:
  // `options` must be valid (OptimizerOptions::Validate).
  ScheduledAdamW(std::vector<at::Tensor> parameters, const OptimizerOptions& options);

  // One update at 0-based step `step`: sets the step's rate, zeroes the
  // gradients, evaluates `loss`, runs its backward pass, then
  // `after_backward` (may be empty: data-parallel training sums gradients
  // and loss there and returns the loss to report), clips the gradients'
  // norm, and steps. Returns the loss to report.
  at::Tensor Step(int step, const std::function<at::Tensor()>& loss,
                  const std::function<at::Tensor(const at::Tensor&)>& after_backward = nullptr);

  // The rate of 0-based step `step` (learning_rate.h's schedule).
  double LearningRate(int step) const;

  // For saving and loading the moments with a run's state.
  torch::optim::AdamW& adamw() { return adamw_; }

 private:
  std::vector<at::Tensor> parameters_;
  OptimizerOptions options_;
  torch::optim::AdamW adamw_;
};

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_SRC_SCHEDULED_ADAMW_H_
