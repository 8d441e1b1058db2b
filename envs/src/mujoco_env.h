// The Env implementation shared by all tasks: a MuJoCo simulation driven by a
// Task's rules under the options' perturbation, with a lazily created
// offscreen renderer.
#ifndef DFMPC_ENVS_SRC_MUJOCO_ENV_H_
#define DFMPC_ENVS_SRC_MUJOCO_ENV_H_

#include <mujoco/mujoco.h>

#include <memory>
#include <string>
#include <vector>

#include "dfmpc/envs/env.h"
#include "env_perturbation.h"
#include "model_loader.h"
#include "renderer.h"
#include "task.h"

namespace dfmpc::envs {

class MujocoEnv final : public Env {
 public:
  MujocoEnv(std::shared_ptr<const Task> task, const EnvOptions& options);

  const std::string& name() const override { return name_; }
  const task::TaskSpec& task() const override { return task_->spec(); }
  const BoxSpec& observation_spec() const override { return observation_spec_; }
  const BoxSpec& action_spec() const override { return action_spec_; }
  double control_timestep() const override;
  int action_repeat() const override { return options_.action_repeat; }
  int episode_length() const override {
    return options_.episode_physics_steps / options_.action_repeat;
  }
  int step_count() const override { return step_count_; }

  Eigen::VectorXd Reset(std::uint64_t seed) override;
  StepResult Step(const Eigen::VectorXd& action) override;
  Eigen::VectorXd Observation() const override;

  Eigen::VectorXd state() const override;
  void set_state(const Eigen::VectorXd& state) override;

  double ShapedReward() const override;
  bool has_success_metric() const override { return task_->has_success_metric(); }
  bool IsSuccess() const override;
  Perturbation perturbation() const override { return perturbation_.values(); }

  std::vector<std::uint8_t> Render(int width, int height) override;
  std::unique_ptr<Env> Clone() const override;

 private:
  MujocoEnv(const MujocoEnv& other);
  int StateSize() const;
  const mjModel* model() const { return perturbation_.model(); }
  // Validates `action` and returns it clipped to the action bounds.
  Eigen::VectorXd Clipped(const Eigen::VectorXd& action) const;

  std::shared_ptr<const Task> task_;
  std::shared_ptr<const mjModel> nominal_model_;  // shared by the clones
  EnvOptions options_;
  std::string name_;
  EnvPerturbation perturbation_;
  DataPtr data_;
  BoxSpec observation_spec_;
  BoxSpec action_spec_;
  int step_count_ = 0;
  std::unique_ptr<Renderer> renderer_;
};

}  // namespace dfmpc::envs

#endif  // DFMPC_ENVS_SRC_MUJOCO_ENV_H_
