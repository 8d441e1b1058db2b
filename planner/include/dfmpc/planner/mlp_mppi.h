// The learned-dynamics peer of the planner (PETS-style), for comparing on
// your own robot: sampling-based MPC on an ensemble of one-step MLP dynamics
// models (`dfmpc train-mlp --ensemble E`) with the task's cost. It is the
// oracle's predictive sampling (envs/predictive_sampling.h: a nominal action
// spline, Gaussian knot perturbations, the nominal shifted one step after
// each control step) with the simulator replaced by the ensemble's mean
// prediction, all candidates rolled out in one batch; with a temperature > 0
// it averages the candidates' knots MPPI-style instead of keeping the best.
// Rollouts run in the ensemble's normalized token space [a_{t-1}, o_t].
//
// Like Planner, the API is Eigen's; LibTorch stays inside.
#ifndef DFMPC_PLANNER_MLP_MPPI_H_
#define DFMPC_PLANNER_MLP_MPPI_H_

#include <Eigen/Core>
#include <cstdint>
#include <memory>
#include <string>

namespace dfmpc::task {
struct TaskSpec;
}  // namespace dfmpc::task

namespace dfmpc::worldmodel {
struct MlpEnsembleCheckpoint;
}  // namespace dfmpc::worldmodel

namespace dfmpc::planner {

class TaskCost;

// Defaults tuned on pendulum_swingup (3 episodes; best return per unit of
// latency among horizons 20..60, 16..64 samples, noise 0.3..0.8,
// temperatures 0, 0.1 and 1).
struct MlpMppiOptions {
  int horizon = 30;          // control steps per rollout
  int num_knots = 4;         // linear spline knots spanning the horizon (2..horizon)
  int num_samples = 32;      // candidates per control step, the nominal included
  double noise_std = 0.5;    // std of the knot perturbation (actions are in [-1, 1])
  double temperature = 0.0;  // 0: keep the best candidate; > 0: MPPI weights exp(-cost / T)
  std::uint64_t seed = 0;
  // A critic's value in each candidate's cost, as PlannerOptions has it
  // (planner.h): value_weight times the discounted steps of reward the
  // critic expects to be missed from the rollout's observation value_step
  // control steps ahead (1..horizon; 0: horizon / 2). Empty: none.
  std::string value_model;
  double value_weight = 0.1;
  int value_step = 0;
  // The weight of the members' disagreement along each rollout in its cost,
  // as PlannerOptions::rollout_disagreement has it. 0: none.
  double disagreement = 0.0;

  // Throws std::invalid_argument naming the first impossible option.
  void Validate() const;
};

class MlpMppi {
 public:
  // Throws std::invalid_argument for impossible options or a cost of
  // another task or shape than the ensemble's.
  MlpMppi(const worldmodel::MlpEnsembleCheckpoint& checkpoint, std::unique_ptr<TaskCost> cost,
          const MlpMppiOptions& options);
  ~MlpMppi();
  MlpMppi(const MlpMppi&) = delete;
  MlpMppi& operator=(const MlpMppi&) = delete;

  // Loads an ensemble file with the cost of the task it carries
  // (model_task.h), or of `task` (a built-in name or a task folder), which
  // must then be the ensemble's (std::runtime_error otherwise).
  static std::unique_ptr<MlpMppi> FromFile(const std::string& ensemble_path,
                                           const MlpMppiOptions& options = {},
                                           const std::string& task = "");
  static std::unique_ptr<MlpMppi> FromFile(const std::string& ensemble_path,
                                           const MlpMppiOptions& options,
                                           const task::TaskSpec& task);

  // Starts an episode: forgets the nominal plan.
  void Reset(const Eigen::VectorXd& observation);
  // The action for `observation`, in [-1, 1]. Throws std::invalid_argument
  // for an observation of the wrong size or with non-finite values.
  Eigen::VectorXd Act(const Eigen::VectorXd& observation);

  // Physics steps per control step the ensemble was trained at.
  int action_repeat() const;
  const MlpMppiOptions& options() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dfmpc::planner

#endif  // DFMPC_PLANNER_MLP_MPPI_H_
