// A cost term written as a formula in the task file:
//
//   [[cost]]
//   term = "expression"
//   expression = "0.5 * max(-gap, 0)"   # any formula (dfmpc/task/expression.h)
//   weight = 1.0
//
// It reads, at each plan step, the observation features by name, the action
// that led there as `action.ACTUATOR`, the same one step before as
// `previous.FEATURE` and `previous.action.ACTUATOR` (a sequence's first step
// reads its own), `dt` (seconds between plan steps) and `step` (the plan's
// first predicted step is 0). It is evaluated on the CPU in double
// precision, all candidates and steps in one call, and its gradient (for
// cost guidance) is taken by central differences.
#ifndef DFMPC_PLANNER_SRC_EXPRESSION_TERM_H_
#define DFMPC_PLANNER_SRC_EXPRESSION_TERM_H_

#include "cost_terms.h"

namespace dfmpc::planner {

// Reads `expression` from `table`; probes the formula at points the task's
// features take and throws std::invalid_argument naming the file and key
// when it is not finite there.
CostTerm ParseExpressionTerm(const task::TaskTable& table, const CostScope& scope);

}  // namespace dfmpc::planner

#endif  // DFMPC_PLANNER_SRC_EXPRESSION_TERM_H_
