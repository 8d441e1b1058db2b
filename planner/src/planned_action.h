// Reading a plan at the control rate: the action a plan made at control step
// p gives for step p + age. Shared by Planner::Action and the AsyncPlanner's
// control thread, which reads a published copy of the plan.
#ifndef DFMPC_PLANNER_PLANNED_ACTION_H_
#define DFMPC_PLANNER_PLANNED_ACTION_H_

#include <Eigen/Core>
#include <cstdint>

namespace dfmpc::planner {

// `chosen` (the action the step picked, MPPI-weighted or the best plan's
// first) for age 0; row `age` of `actions` (the kept plan's actions, H rows
// or none) clamped to [-1, 1] for a later step; zero past the plan's end or
// for a row that is not finite.
inline Eigen::VectorXd PlannedAction(const Eigen::VectorXd& chosen, const Eigen::MatrixXd& actions,
                                     std::int64_t age) {
  if (age == 0) return chosen;
  if (age > 0 && age < actions.rows() && actions.row(age).allFinite()) {
    return actions.row(age).transpose().cwiseMax(-1.0).cwiseMin(1.0);
  }
  return Eigen::VectorXd::Zero(chosen.size());
}

}  // namespace dfmpc::planner

#endif  // DFMPC_PLANNER_PLANNED_ACTION_H_
