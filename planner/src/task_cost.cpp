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

// The sum of a task file's [[cost]] terms, in the file's order.
class TaskFileCost final : public TaskCost {
 public:
  explicit TaskFileCost(const task::TaskSpec& spec) : task_(spec.name) {
    std::vector<std::string> features;
    for (const task::TaskTable& feature : spec.root.Tables("observation")) {
      features.push_back(feature.Text("name"));
    }
    observation_dim_ = static_cast<int>(features.size());
    action_dim_ = static_cast<int>(spec.root.Texts("actions").size());
    for (const task::TaskTable& term : spec.root.Tables("cost")) {
      terms_.push_back(ParseCostTerm(term, features));
    }
    if (terms_.empty()) spec.root.Fail("cost", "missing: at least one [[cost]] term");
  }
  const std::string& task() const override { return task_; }
  int observation_dim() const override { return observation_dim_; }
  int action_dim() const override { return action_dim_; }

 protected:
  at::Tensor Evaluate(const at::Tensor& observations, const at::Tensor& actions) const override {
    at::Tensor cost = terms_.front()(observations, actions);
    for (size_t i = 1; i < terms_.size(); ++i) cost = cost + terms_[i](observations, actions);
    return cost;
  }

 private:
  std::string task_;
  int observation_dim_ = 0;
  int action_dim_ = 0;
  std::vector<CostTerm> terms_;
};

}  // namespace

at::Tensor TaskCost::StepCosts(const at::Tensor& observations, const at::Tensor& actions) const {
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
  return Evaluate(observations, actions);
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
  return StepCosts(at::cat({lead_observation, observations}, 1), at::cat({lead_action, actions}, 1))
      .narrow(1, 1, steps);
}

std::unique_ptr<TaskCost> MakeTaskCost(const std::string& task) {
  return MakeTaskCost(task::LoadTaskSpec(task));
}

std::unique_ptr<TaskCost> MakeTaskCost(const task::TaskSpec& task) {
  return std::make_unique<TaskFileCost>(task);
}

}  // namespace dfmpc::planner
