// A task: its MuJoCo model plus the rules, read from a task file, that turn
// physics into observations and rewards. Tasks are immutable once built, so
// one instance is shared by an environment and all its clones.
#ifndef DFMPC_ENVS_SRC_TASK_H_
#define DFMPC_ENVS_SRC_TASK_H_

#include <mujoco/mujoco.h>

#include <Eigen/Core>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dfmpc/task/task_spec.h"
#include "random.h"
#include "reward_formula.h"
#include "task_reward.h"

namespace dfmpc::envs {

class Task {
 public:
  // Compiles the spec's MJCF and resolves every name of its task file
  // against it. Throws std::invalid_argument naming the file and the key of
  // the first problem (MuJoCo's message for an MJCF it rejects).
  explicit Task(task::TaskSpec spec);

  const std::string& name() const { return spec_.name; }
  const task::TaskSpec& spec() const { return spec_; }
  std::shared_ptr<const mjModel> model() const { return model_; }
  const std::string& camera() const { return camera_; }
  int default_action_repeat() const { return action_repeat_; }
  int default_episode_physics_steps() const { return episode_physics_steps_; }

  int observation_size() const { return static_cast<int>(features_.size()); }
  int action_size() const { return static_cast<int>(actuators_.size()); }
  const std::vector<std::string>& observation_names() const { return feature_names_; }
  void ObservationBounds(Eigen::VectorXd* lower, Eigen::VectorXd* upper) const;
  // Typical magnitude of each observation component, the unit of relative
  // observation noise.
  const Eigen::VectorXd& ObservationScale() const { return scale_; }

  // Writes an action into `data->ctrl` (the actuators in the task's order).
  void Actuate(const Eigen::VectorXd& action, mjData* data) const;
  // Sets the initial state in `data`, already reset to the model's defaults:
  // the [[initial]] draws, then `settle_physics_steps` unactuated physics
  // steps of the task's (nominal) model.
  void Initialize(mjData* data, Rng* rng) const;
  // Computes what observations and rewards read (poses, sensors) after the
  // state changed. It never alters the trajectory.
  void Sense(const mjModel* model, mjData* data) const;
  void Observe(const mjData* data, Eigen::Ref<Eigen::VectorXd> observation) const;
  // Per-physics-step reward in [0, 1]; `data->ctrl` holds the applied action.
  double Reward(const mjModel* model, const mjData* data) const;
  double ShapedReward(const mjModel* model, const mjData* data) const;
  bool has_success_metric() const { return static_cast<bool>(success_); }
  bool IsSuccess(const mjModel* model, const mjData* data) const;
  // Each formula of the task file ("FILE: reward.expression") and its value
  // at the state in `data`.
  std::vector<std::pair<std::string, double>> FormulaValues(const mjModel* model,
                                                            const mjData* data) const;

 private:
  task::TaskSpec spec_;
  std::shared_ptr<const mjModel> model_;
  std::string camera_;
  int action_repeat_ = 1;
  int episode_physics_steps_ = 1000;
  int settle_physics_steps_ = 0;
  std::vector<std::string> feature_names_;
  std::vector<Quantity> features_;
  Eigen::VectorXd lower_, upper_, scale_;
  std::vector<int> actuators_;
  std::vector<std::function<void(mjData*, Rng*)>> initial_;
  Quantity reward_;
  Quantity shaped_reward_;  // empty when the task has none
  Quantity success_;        // empty when the task defines no success
  std::vector<std::shared_ptr<const RewardFormula>> formulas_;
  bool needs_acceleration_ = false;

  // Throws, naming the formula, where one is not finite at the first
  // initial states or at points around them.
  void ProbeFormulas() const;
};

}  // namespace dfmpc::envs

#endif  // DFMPC_ENVS_SRC_TASK_H_
