// Reading a plan at the control rate: the action a plan made at control step
// p gives for step p + age. Shared by Planner::Action and the AsyncPlanner's
// control thread, which reads a published copy of the plan.
#ifndef DFMPC_PLANNER_PLANNED_ACTION_H_
#define DFMPC_PLANNER_PLANNED_ACTION_H_

#include <Eigen/Core>
#include <cmath>
#include <cstdint>

namespace dfmpc::planner {

// The action gain with its knee (PlannerOptions::action_gain and
// action_gain_knee), per coordinate: a magnitude up to `knee` passes
// unchanged, the part above it is multiplied by `gain`; the result is
// clamped to [-1, 1]. Knee 0 scales the whole action.
inline Eigen::VectorXd AmplifiedAction(Eigen::VectorXd action, double gain, double knee) {
  for (Eigen::Index i = 0; i < action.size(); ++i) {
    const double magnitude = std::abs(action[i]);
    if (magnitude > knee) action[i] = std::copysign(knee + gain * (magnitude - knee), action[i]);
  }
  return action.cwiseMax(-1.0).cwiseMin(1.0);
}

// The action window's mean (PlannerOptions::action_window): `own`, the
// action for the step `age` steps after the plan's, averaged with the
// plan's finite actions for the `window` - 1 steps after it (rows age + 1
// on of `actions`, as many as it has), amplified by `gain` above `knee`.
inline Eigen::VectorXd WindowedAction(const Eigen::VectorXd& own, const Eigen::MatrixXd& actions,
                                      std::int64_t age, int window, double gain, double knee) {
  Eigen::VectorXd sum = own;
  int count = 1;
  for (std::int64_t row = age + 1; row < age + window && row < actions.rows(); ++row) {
    if (!actions.row(row).allFinite()) continue;
    sum += actions.row(row).transpose();
    ++count;
  }
  return AmplifiedAction(sum / count, gain, knee);
}

// `chosen` (the action the step settled on, already windowed and amplified) for age 0;
// the windowed row `age` of `actions` (the kept plan's actions, H rows or
// none) for a later step; zero past the plan's end or for a row that is
// not finite.
inline Eigen::VectorXd PlannedAction(const Eigen::VectorXd& chosen, const Eigen::MatrixXd& actions,
                                     std::int64_t age, int window, double gain, double knee) {
  if (age == 0) return chosen;
  if (age > 0 && age < actions.rows() && actions.row(age).allFinite()) {
    return WindowedAction(actions.row(age).transpose(), actions, age, window, gain, knee);
  }
  return Eigen::VectorXd::Zero(chosen.size());
}

}  // namespace dfmpc::planner

#endif  // DFMPC_PLANNER_PLANNED_ACTION_H_
