// Task costs for planning: differentiable functions of a predicted plan
// (observations and actions, in the environment's units), lower is better.
// The generic terms are tensor operations; a task file's formulas
// (`term = "expression"`) are evaluated on the CPU in double precision and
// differentiated by central differences, so that cost guidance can take the
// gradient of either with respect to the plan.
#ifndef DFMPC_PLANNER_TASK_COST_H_
#define DFMPC_PLANNER_TASK_COST_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <string>

namespace dfmpc::task {
struct TaskSpec;
}  // namespace dfmpc::task

namespace dfmpc::planner {

class TaskCost {
 public:
  virtual ~TaskCost() = default;

  // The task (its file's name) whose observation layout this cost reads.
  virtual const std::string& task() const = 0;
  virtual int observation_dim() const = 0;
  virtual int action_dim() const = 0;

  // observations: [B, H, observation_dim], actions: [B, H, action_dim] (the
  // action taken before each observation, as in the tokens), floating point.
  // Returns the per-step cost [B, H], differentiable with respect to both
  // inputs. The built-in terms are finite and >= 0; a formula may be
  // negative, and is finite at least where it was probed at load (planners
  // never choose a plan whose cost is not). Throws std::invalid_argument on
  // other shapes.
  // `first_step` is the plan step column 0 holds, which a formula reads as
  // `step`; a formula's `previous.NAME` reads the column before, and column 0
  // its own values.
  at::Tensor StepCosts(const at::Tensor& observations, const at::Tensor& actions,
                       int64_t first_step = 0) const;
  // The per-step cost [B, H] of plans that follow the step just taken: that
  // step (`last_observation` [observation_dim], the observation now, and
  // `last_action` [action_dim], the action applied before it) leads each
  // plan, so that terms across steps (action_rate, a finite-difference
  // velocity) see the boundary, and its own cost is dropped. This is how
  // planners score their candidates: a plan's first action is charged for
  // its change from the action the actuator holds. The plan's first
  // predicted step is step 0.
  at::Tensor PlanCosts(const at::Tensor& observations, const at::Tensor& actions,
                       const at::Tensor& last_observation, const at::Tensor& last_action) const;

 protected:
  // StepCosts after the shape checks.
  virtual at::Tensor Evaluate(const at::Tensor& observations, const at::Tensor& actions,
                              int64_t first_step) const = 0;
};

// The cost of a task file's [[cost]] terms (dfmpc/task/task_spec.h).
// `task`: a built-in name or a task folder. `action_repeat`: the physics
// steps between plan steps (a model's, ModelInfo::action_repeat; 0 takes
// the task file's), which set a formula's `dt`. Throws std::invalid_argument
// naming the known tasks for an unknown name, and the file and key for a
// term it cannot build (a formula that does not parse, or gives NaN or inf
// at a point the task's features can take).
std::unique_ptr<TaskCost> MakeTaskCost(const std::string& task, int action_repeat = 0);
std::unique_ptr<TaskCost> MakeTaskCost(const task::TaskSpec& task, int action_repeat = 0);

// The [[cost]] term of `task` at `index` (in the file's order) alone,
// weighted: what `dfmpc task check` and `dfmpc bench cost` show term by
// term. Throws as MakeTaskCost does, and std::out_of_range for an index
// past the terms.
std::unique_ptr<TaskCost> MakeTaskCostTerm(const task::TaskSpec& task, int index,
                                           int action_repeat = 0);

// `cost` plus a critic's view beyond the plan (issue 31): at one step of
// every plan it scores, weight * (1 - v(o)) / (1 - gamma), where v in
// (0, 1) is the reward rate the critic in `value_path`
// (dfmpc/worldmodel/value_model.h, made by `dfmpc train-value`) expects
// from that step's observation o on. At weight 1 the term counts the
// discounted steps of full reward the critic expects to be missed from
// there. `step` (>= 1) is a column of the steps StepCosts is given, so in
// PlanCosts (where the step just taken leads) the observation `step`
// control steps ahead; a sequence too short to reach it gets no term. The
// planner reads the middle of its plan by default, not its end: the far end
// of a warm plan is its noisiest estimate (docs/experiments.md, A value
// beyond the plan). The critic runs on `device` ("cpu", "cuda", "cuda:N").
// Throws std::runtime_error naming the file when it is not a value model of
// the cost's task and observation size, or when its data's control rate is
// not `action_repeat` physics steps (0: not checked); std::invalid_argument
// for a weight that is not finite and > 0 or a step < 1.
std::unique_ptr<TaskCost> WithValue(std::unique_ptr<TaskCost> cost, const std::string& value_path,
                                    double weight, int step, const std::string& device = "cpu",
                                    int action_repeat = 0);

}  // namespace dfmpc::planner

#endif  // DFMPC_PLANNER_TASK_COST_H_
