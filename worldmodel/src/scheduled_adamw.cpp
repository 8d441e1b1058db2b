#include "scheduled_adamw.h"

#include <torch/nn/utils/clip_grad.h>

#include <cmath>
#include <stdexcept>
#include <utility>

#include "learning_rate.h"
#include "training_heap.h"

namespace dfmpc::worldmodel {

void OptimizerOptions::Validate(const std::string& owner) const {
  const auto require = [&owner](bool ok, const std::string& what) {
    if (!ok) throw std::invalid_argument(owner + ": " + what);
  };
  require(steps >= 1, "steps must be positive, got " + std::to_string(steps));
  require(batch_size >= 1, "batch size must be positive, got " + std::to_string(batch_size));
  require(learning_rate > 0 && std::isfinite(learning_rate), "learning rate must be positive");
  require(min_learning_rate_ratio >= 0 && min_learning_rate_ratio <= 1,
          "min learning rate ratio must be in [0, 1]");
  require(warmup_steps >= 0, "warmup steps must be >= 0, got " + std::to_string(warmup_steps));
  require(weight_decay >= 0 && std::isfinite(weight_decay), "weight decay must be >= 0");
  require(grad_clip >= 0 && std::isfinite(grad_clip),
          "gradient clip must be >= 0 (0: no clipping)");
}

ScheduledAdamW::ScheduledAdamW(std::vector<at::Tensor> parameters, const OptimizerOptions& options)
    : parameters_(std::move(parameters)),
      options_(options),
      adamw_(parameters_,
             torch::optim::AdamWOptions(options.learning_rate).weight_decay(options.weight_decay)) {
  RetainHeapForTraining();
}

at::Tensor ScheduledAdamW::Step(
    int step, const std::function<at::Tensor()>& loss,
    const std::function<at::Tensor(const at::Tensor&)>& after_backward) {
  for (auto& group : adamw_.param_groups()) {
    static_cast<torch::optim::AdamWOptions&>(group.options()).lr(LearningRate(step));
  }
  adamw_.zero_grad();
  at::Tensor reported = loss();
  reported.backward();
  if (after_backward) reported = after_backward(reported);
  if (options_.grad_clip > 0) torch::nn::utils::clip_grad_norm_(parameters_, options_.grad_clip);
  adamw_.step();
  return reported;
}

double ScheduledAdamW::LearningRate(int step) const {
  return WarmupCosineLearningRate(step, options_.steps, options_.warmup_steps,
                                  options_.learning_rate, options_.min_learning_rate_ratio);
}

}  // namespace dfmpc::worldmodel
