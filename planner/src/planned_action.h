// Reading a plan at the control rate: the action a plan made at control step
// p gives for step p + age. Shared by Planner::Action and the AsyncPlanner's
// control thread, which reads a published copy of the plan.
#ifndef DFMPC_PLANNER_PLANNED_ACTION_H_
#define DFMPC_PLANNER_PLANNED_ACTION_H_

#include <Eigen/Core>
#include <cstdint>

namespace dfmpc::planner {

// The action window's mean (PlannerOptions::action_window): `own`, the
// action for the step `age` steps after the plan's, averaged with the
// plan's finite actions for the `window` - 1 steps after it (rows age + 1
// on of `actions`, as many as it has), times `gain`
// (PlannerOptions::action_gain), clamped to [-1, 1].
inline Eigen::VectorXd WindowedAction(const Eigen::VectorXd& own, const Eigen::MatrixXd& actions,
                                      std::int64_t age, int window, double gain) {
  Eigen::VectorXd sum = own;
  int count = 1;
  for (std::int64_t row = age + 1; row < age + window && row < actions.rows(); ++row) {
    if (!actions.row(row).allFinite()) continue;
    sum += actions.row(row).transpose();
    ++count;
  }
  return (gain / count * sum).cwiseMax(-1.0).cwiseMin(1.0);
}

// `chosen` (the action the step settled on, already windowed and scaled) for age 0;
// the windowed row `age` of `actions` (the kept plan's actions, H rows or
// none) for a later step; zero past the plan's end or for a row that is
// not finite.
inline Eigen::VectorXd PlannedAction(const Eigen::VectorXd& chosen, const Eigen::MatrixXd& actions,
                                     std::int64_t age, int window, double gain) {
  if (age == 0) return chosen;
  if (age > 0 && age < actions.rows() && actions.row(age).allFinite()) {
    return WindowedAction(actions.row(age).transpose(), actions, age, window, gain);
  }
  return Eigen::VectorXd::Zero(chosen.size());
}

}  // namespace dfmpc::planner

#endif  // DFMPC_PLANNER_PLANNED_ACTION_H_
