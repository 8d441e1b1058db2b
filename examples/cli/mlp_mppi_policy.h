// The learned-dynamics peer of the planner (PETS-style): sampling-based MPC
// on an ensemble of one-step MLP dynamics models with the planner's task
// cost. It is the oracle's predictive sampling (envs/predictive_sampling.h:
// a nominal action spline, Gaussian knot perturbations, the nominal shifted
// one step after each control step) with the simulator replaced by the
// ensemble's mean prediction, all candidates rolled out in one batch;
// with a temperature > 0 it averages the candidates' knots MPPI-style
// instead of keeping the best. Rollouts run in the ensemble's normalized
// token space [a_{t-1}, o_t]: candidate actions are normalized going in and
// predicted observations denormalized coming out, as the cost takes the
// environment's units.
//
// Why here, in examples/: it joins a worldmodel model, a planner cost and the
// envs policy interface, the one place where all three may meet without
// planner/ or worldmodel/ depending on envs/; like the planner's own policy
// wrapper (planner_policy.h) it serves the commands that run episodes.
#ifndef DFMPC_EXAMPLES_CLI_MLP_MPPI_POLICY_H_
#define DFMPC_EXAMPLES_CLI_MLP_MPPI_POLICY_H_

#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>

#include <Eigen/Core>
#include <cstdint>
#include <memory>
#include <string>

#include "dfmpc/planner/task_cost.h"
#include "dfmpc/task/task_spec.h"
#include "dfmpc/worldmodel/mlp_ensemble.h"
#include "timed_policy.h"

namespace dfmpc::cli {

// Defaults tuned on pendulum_swingup (mlp-mppi, 3 episodes; best
// return per unit of latency among horizons 20..60, 16..64 samples, noise
// 0.3..0.8, temperatures 0, 0.1 and 1).
struct MlpMppiOptions {
  int horizon = 30;          // control steps per rollout
  int num_knots = 4;         // linear spline knots spanning the horizon (2..horizon)
  int num_samples = 32;      // candidates per control step, the nominal included
  double noise_std = 0.5;    // std of the knot perturbation (actions are in [-1, 1])
  double temperature = 0.0;  // 0: keep the best candidate; > 0: MPPI weights exp(-cost / T)
  std::uint64_t seed = 0;

  // Throws std::invalid_argument naming the first impossible option.
  void Validate() const;
};

class MlpMppiPolicy final : public TimedPolicy {
 public:
  // Actions stay in [-1, 1]. Throws std::invalid_argument for impossible
  // options or a cost of another task or shape than the ensemble's.
  MlpMppiPolicy(worldmodel::MlpEnsembleCheckpoint checkpoint,
                std::unique_ptr<planner::TaskCost> cost, const MlpMppiOptions& options);

  void Reset(const Eigen::VectorXd& observation) override;
  // Throws std::invalid_argument for an observation of the wrong size or
  // with non-finite values.
  Eigen::VectorXd Act(const Eigen::VectorXd& observation) override;
  int action_repeat() const override { return checkpoint_.info.action_repeat; }

 private:
  Eigen::VectorXd Plan(const Eigen::VectorXd& observation);

  worldmodel::MlpEnsembleCheckpoint checkpoint_;
  std::unique_ptr<planner::TaskCost> cost_;
  MlpMppiOptions options_;
  at::Generator generator_;
  at::Tensor interpolation_;    // [H, knots]: actions of the horizon from the knots
  at::Tensor shift_;            // [knots, knots]: the knots one control step later
  at::Tensor nominal_;          // [knots, act]
  at::Tensor previous_action_;  // [act], a_{t-1} of the next token
};

// Loads the ensemble at `path` for `task` (errors name the file) and builds
// the policy with the task's cost.
std::unique_ptr<MlpMppiPolicy> MakeMlpMppiPolicy(const std::string& path,
                                                 const task::TaskSpec& task,
                                                 const MlpMppiOptions& options);

}  // namespace dfmpc::cli

#endif  // DFMPC_EXAMPLES_CLI_MLP_MPPI_POLICY_H_
