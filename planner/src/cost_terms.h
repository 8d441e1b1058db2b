// The cost terms a task file's [[cost]] tables name, as differentiable
// tensor functions of a plan. docs/your_robot.md describes each term.
#ifndef DFMPC_PLANNER_SRC_COST_TERMS_H_
#define DFMPC_PLANNER_SRC_COST_TERMS_H_

#include <ATen/core/Tensor.h>

#include <functional>
#include <string>
#include <vector>

#include "dfmpc/task/task_spec.h"

namespace dfmpc::planner {

// observations [B, H, D], actions [B, H, A] -> weighted cost [B, H].
using CostTerm = std::function<at::Tensor(const at::Tensor&, const at::Tensor&)>;

// One [[cost]] table, its features looked up in `feature_names` (the
// observation's, in order). Throws std::invalid_argument naming the file and
// key for an unknown term, a missing or misspelt parameter or feature.
CostTerm ParseCostTerm(const task::TaskTable& table, const std::vector<std::string>& feature_names);

}  // namespace dfmpc::planner

#endif  // DFMPC_PLANNER_SRC_COST_TERMS_H_
