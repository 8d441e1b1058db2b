// A critic's value in a plan's cost (task_cost.h, WithValue).
#include <ATen/ATen.h>

#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "dfmpc/planner/task_cost.h"
#include "dfmpc/worldmodel/device.h"
#include "dfmpc/worldmodel/value_model.h"

namespace dfmpc::planner {
namespace {

class ValueCost final : public TaskCost {
 public:
  ValueCost(std::unique_ptr<TaskCost> inner, worldmodel::ValueCheckpoint critic, double weight,
            int step)
      : inner_(std::move(inner)),
        critic_(std::move(critic)),
        scale_(weight / (1.0 - critic_.info.config.discount)),
        step_(step) {}

  const std::string& task() const override { return inner_->task(); }
  int observation_dim() const override { return inner_->observation_dim(); }
  int action_dim() const override { return inner_->action_dim(); }

 protected:
  at::Tensor Evaluate(const at::Tensor& observations, const at::Tensor& actions,
                      int64_t first_step) const override {
    const at::Tensor cost = inner_->StepCosts(observations, actions, first_step);
    const int64_t steps = cost.size(1);
    if (step_ >= steps) return cost;  // a prefix that does not reach the step yet
    const int64_t column = step_;
    const at::Tensor rate = critic_.Value(observations.select(1, column));  // in (0, 1)
    const at::Tensor missed = (1.0 - rate).to(cost.device(), cost.scalar_type()) * scale_;
    return at::cat({cost.narrow(1, 0, column), cost.narrow(1, column, 1) + missed.unsqueeze(1),
                    cost.narrow(1, column + 1, steps - column - 1)},
                   1);
  }

 private:
  std::unique_ptr<TaskCost> inner_;
  worldmodel::ValueCheckpoint critic_;
  double scale_;  // weight / (1 - gamma)
  int step_;      // the column the critic reads
};

}  // namespace

std::unique_ptr<TaskCost> WithValue(std::unique_ptr<TaskCost> cost, const std::string& value_path,
                                    double weight, int step, const std::string& device,
                                    int action_repeat) {
  if (!cost) throw std::invalid_argument("value: no task cost given");
  if (!std::isfinite(weight) || weight <= 0.0) {
    throw std::invalid_argument("value: the weight must be finite and > 0, got " +
                                std::to_string(weight));
  }
  if (step < 1) {
    throw std::invalid_argument("value: the step must be >= 1, got " + std::to_string(step));
  }
  worldmodel::ValueCheckpoint critic = worldmodel::LoadValueModel(
      value_path, {cost->task(), cost->observation_dim()}, worldmodel::ParseDevice(device));
  if (action_repeat > 0 && critic.info.action_repeat != action_repeat) {
    throw std::runtime_error("checkpoint " + value_path + ": value model learnt at " +
                             std::to_string(critic.info.action_repeat) +
                             " physics step(s) per control step, the planner's model at " +
                             std::to_string(action_repeat));
  }
  return std::make_unique<ValueCost>(std::move(cost), std::move(critic), weight, step);
}

}  // namespace dfmpc::planner
