#include "dfmpc/planner/task_cost.h"

#include <ATen/ATen.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cost_terms.h"
#include "dfmpc/task/task_spec.h"

namespace dfmpc::planner {
namespace {

// What a task's cost terms may read: its observation features (with the
// ranges a formula is probed over), actuators and control step.
CostScope Scope(const task::TaskSpec& spec, int action_repeat) {
  CostScope scope;
  for (const task::TaskTable& feature : spec.root.Tables("observation")) {
    scope.features.push_back(feature.Text("name"));
    const double scale = feature.Number("scale", 1.0);
    std::vector<double> bounds = {-scale, scale};
    if (feature.Has("bounds")) bounds = feature.Numbers("bounds");
    if (bounds.size() != 2) feature.Fail("bounds", "expected [lower, upper]");
    scope.lower.push_back(bounds[0]);
    scope.upper.push_back(bounds[1]);
  }
  scope.actuators = spec.root.Texts("actions");
  scope.control_timestep = [&spec, action_repeat] {
    return task::ControlTimestep(spec, action_repeat);
  };
  return scope;
}

// The sum of a task file's [[cost]] terms, in the file's order (or of the
// one at `only`, when it is >= 0).
class TaskFileCost final : public TaskCost {
 public:
  TaskFileCost(const task::TaskSpec& spec, int action_repeat, int only = -1) : task_(spec.name) {
    const CostScope scope = Scope(spec, action_repeat);
    observation_dim_ = static_cast<int>(scope.features.size());
    action_dim_ = static_cast<int>(scope.actuators.size());
    for (const task::TaskTable& term : spec.root.Tables("cost")) {
      terms_.push_back(ParseCostTerm(term, scope));
    }
    if (terms_.empty()) spec.root.Fail("cost", "missing: at least one [[cost]] term");
    if (only >= static_cast<int>(terms_.size())) {
      throw std::out_of_range(spec.file + ": no cost[" + std::to_string(only) + "] (" +
                              std::to_string(terms_.size()) + " terms)");
    }
    if (only >= 0) terms_ = {terms_[only]};
  }
  const std::string& task() const override { return task_; }
  int observation_dim() const override { return observation_dim_; }
  int action_dim() const override { return action_dim_; }

 protected:
  at::Tensor Evaluate(const at::Tensor& observations, const at::Tensor& actions,
                      int64_t first_step) const override {
    at::Tensor cost = terms_.front()(observations, actions, first_step);
    for (size_t i = 1; i < terms_.size(); ++i) {
      cost = cost + terms_[i](observations, actions, first_step);
    }
    return cost;
  }

 private:
  std::string task_;
  int observation_dim_ = 0;
  int action_dim_ = 0;
  std::vector<CostTerm> terms_;
};

}  // namespace

at::Tensor TaskCost::StepCosts(const at::Tensor& observations, const at::Tensor& actions,
                               int64_t first_step) const {
  auto check = [&](const at::Tensor& tensor, const char* name, int last_dim) {
    const std::string expected = c10::str("a floating [B, H, ", last_dim, "] tensor");
    if (!tensor.defined()) {
      throw std::invalid_argument(
          c10::str(task(), " cost: ", name, " must be ", expected, ", got an undefined tensor"));
    }
    if (!at::isFloatingType(tensor.scalar_type()) || tensor.dim() != 3 ||
        tensor.size(2) != last_dim) {
      throw std::invalid_argument(c10::str(task(), " cost: ", name, " must be ", expected, ", got ",
                                           tensor.scalar_type(), " ", tensor.sizes()));
    }
  };
  check(observations, "observations", observation_dim());
  check(actions, "actions", action_dim());
  if (observations.size(0) != actions.size(0) || observations.size(1) != actions.size(1)) {
    throw std::invalid_argument(c10::str(task(), " cost: observations ", observations.sizes(),
                                         " and actions ", actions.sizes(),
                                         " must agree in B and H"));
  }
  return Evaluate(observations, actions, first_step);
}

at::Tensor TaskCost::PlanCosts(const at::Tensor& observations, const at::Tensor& actions,
                               const at::Tensor& last_observation,
                               const at::Tensor& last_action) const {
  if (!observations.defined() || observations.dim() != 3 || !actions.defined() ||
      actions.dim() != 3) {
    return StepCosts(observations, actions);  // throws, naming the problem
  }
  if (!last_observation.defined() || last_observation.numel() != observation_dim() ||
      !last_action.defined() || last_action.numel() != action_dim()) {
    throw std::invalid_argument(c10::str(task(), " cost: the last step must hold ",
                                         observation_dim(), " observation and ", action_dim(),
                                         " action values"));
  }
  const int64_t batch = observations.size(0), steps = observations.size(1);
  const at::Tensor lead_observation =
      last_observation.to(observations.options()).view({1, 1, -1}).expand({batch, 1, -1});
  const at::Tensor lead_action =
      last_action.to(actions.options()).view({1, 1, -1}).expand({batch, 1, -1});
  return StepCosts(at::cat({lead_observation, observations}, 1), at::cat({lead_action, actions}, 1),
                   /*first_step=*/-1)
      .narrow(1, 1, steps);
}

std::unique_ptr<TaskCost> MakeTaskCost(const std::string& task, int action_repeat) {
  return MakeTaskCost(task::LoadTaskSpec(task), action_repeat);
}

std::unique_ptr<TaskCost> MakeTaskCost(const task::TaskSpec& task, int action_repeat) {
  return std::make_unique<TaskFileCost>(task, action_repeat);
}

std::unique_ptr<TaskCost> MakeTaskCostTerm(const task::TaskSpec& task, int index,
                                           int action_repeat) {
  if (index < 0) throw std::out_of_range(task.file + ": no cost[" + std::to_string(index) + "]");
  return std::make_unique<TaskFileCost>(task, action_repeat, index);
}

}  // namespace dfmpc::planner
