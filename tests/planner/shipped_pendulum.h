// The shipped pendulum model and small planner options for planner tests.
#ifndef DFMPC_TESTS_PLANNER_SHIPPED_PENDULUM_H_
#define DFMPC_TESTS_PLANNER_SHIPPED_PENDULUM_H_

#include <Eigen/Core>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dfmpc/envs/env.h"
#include "dfmpc/planner/planner.h"
#include "dfmpc/planner/task_cost.h"
#include "dfmpc/worldmodel/checkpoint.h"

namespace dfmpc::planner {

inline const std::string kPendulum = "pendulum_swingup";

inline std::string ModelPath(const std::string& task) {
  return std::string(DFMPC_SHIPPED_MODELS_DIR) + "/" + task + ".pt";
}

// Loaded once per test binary; planners share its weights.
inline const worldmodel::Checkpoint& Pendulum() {
  static const worldmodel::Checkpoint checkpoint = worldmodel::LoadCheckpoint(ModelPath(kPendulum));
  return checkpoint;
}

inline std::unique_ptr<Planner> MakePlanner(const PlannerOptions& options) {
  return std::make_unique<Planner>(Pendulum(), MakeTaskCost(kPendulum), options);
}

// H = 16, K = 4, one candidate: a step costs about a millisecond.
inline PlannerOptions Small(PlanMode mode) {
  PlannerOptions options;
  options.mode = mode;
  options.horizon = 16;
  options.levels = 4;
  options.candidates = 1;
  return options;
}

// The observations and actions of `steps` control steps of `planner` on the
// pendulum started with `seed`.
struct Trajectory {
  std::vector<Eigen::VectorXd> observations, actions;
};

inline Trajectory Drive(Planner& planner, int steps, std::uint64_t seed) {
  auto env = envs::MakeEnv(kPendulum);
  Trajectory trajectory;
  Eigen::VectorXd observation = env->Reset(seed);
  planner.Reset(observation);
  for (int s = 0; s < steps; ++s) {
    trajectory.observations.push_back(observation);
    const Eigen::VectorXd action = planner.Act(observation);
    trajectory.actions.push_back(action);
    observation = env->Step(action).observation;
  }
  trajectory.observations.push_back(observation);
  return trajectory;
}

// Mean |a_t - a_{t-1}| over the trajectory's steps and action components.
inline double MeanActionChange(const Trajectory& trajectory) {
  double total = 0.0;
  for (size_t t = 1; t < trajectory.actions.size(); ++t) {
    total += (trajectory.actions[t] - trajectory.actions[t - 1]).cwiseAbs().mean();
  }
  return total / (trajectory.actions.size() - 1);
}

}  // namespace dfmpc::planner

#endif  // DFMPC_TESTS_PLANNER_SHIPPED_PENDULUM_H_
