// The cost terms a task file's [[cost]] tables name: the generic terms as
// differentiable tensor functions of a plan, and formulas over its named
// features (`term = "expression"`, expression_term.h). docs/your_robot.md
// describes each term.
#ifndef DFMPC_PLANNER_SRC_COST_TERMS_H_
#define DFMPC_PLANNER_SRC_COST_TERMS_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dfmpc/task/task_spec.h"

namespace dfmpc::planner {

// observations [B, H, D], actions [B, H, A] and the plan step that column 0
// holds (TaskCost::StepCosts) -> weighted cost [B, H].
using CostTerm =
    std::function<at::Tensor(const at::Tensor&, const at::Tensor&, int64_t first_step)>;

// What a task's cost terms may read, while they are parsed.
struct CostScope {
  std::vector<std::string> features;  // the observation's, in order
  // A range each feature takes (its bounds, else +-scale): formulas are
  // probed there at load.
  std::vector<double> lower, upper;
  std::vector<std::string> actuators;        // the action's, in order
  std::function<double()> control_timestep;  // seconds between plan steps
};

// One [[cost]] table. Throws std::invalid_argument naming the file and key
// for an unknown term, a missing or misspelt parameter or feature, or a
// formula that does not parse or is not finite where it is probed.
CostTerm ParseCostTerm(const task::TaskTable& table, const CostScope& scope);

}  // namespace dfmpc::planner

#endif  // DFMPC_PLANNER_SRC_COST_TERMS_H_
