// What a PerturbationSpec adds to a MujocoEnv: each episode's sampled values,
// the rescaled physical model, the action delay queue and the observation
// noise, and their part of the environment's state.
#ifndef DFMPC_ENVS_SRC_ENV_PERTURBATION_H_
#define DFMPC_ENVS_SRC_ENV_PERTURBATION_H_

#include <mujoco/mujoco.h>

#include <Eigen/Core>
#include <cstdint>
#include <memory>

#include "action_delay.h"
#include "dfmpc/envs/perturbation.h"
#include "perturbed_model.h"

namespace dfmpc::envs {

class EnvPerturbation {
 public:
  // Throws std::invalid_argument for an invalid spec. `observation_scale`
  // holds each observation feature's scale (for obs_noise_rel).
  EnvPerturbation(const PerturbationSpec& spec, std::shared_ptr<const mjModel> nominal,
                  Eigen::VectorXd observation_scale);

  // The model to simulate: the nominal one unless a scale is off 1.
  const mjModel* model() const { return model_.get(); }
  const Perturbation& values() const { return values_; }

  // Starts the episode of `seed`: draws its values (nothing for a nominal
  // spec) and applies them.
  void Reset(std::uint64_t seed);
  // Queues the commanded action and returns the one to apply now.
  Eigen::VectorXd Delay(const Eigen::VectorXd& commanded) { return delay_.Push(commanded); }
  // Adds the observation noise of control step `step`.
  void AddNoise(int step, Eigen::Ref<Eigen::VectorXd> observation) const;

  // Entries this adds to the environment's state (0 for a nominal spec):
  // the values (PerturbationNames() order), the noise key as two 32-bit
  // halves (high first), and the pending actions (ActionDelay::Pack).
  int state_size() const;
  void Pack(Eigen::VectorXd* state, int* offset) const;
  // Restores what Pack wrote; throws std::invalid_argument (changing
  // nothing) when the entries are invalid.
  void Unpack(const Eigen::VectorXd& state, int* offset);

 private:
  // Applies `values` and `noise_key` (the delay queue is the caller's).
  void Apply(const Perturbation& values, std::uint64_t noise_key);

  PerturbationSpec spec_;
  bool nominal_;
  Eigen::VectorXd observation_scale_;
  PerturbedModel model_;
  ActionDelay delay_;
  Perturbation values_;
  std::uint64_t noise_key_ = 0;
  Eigen::VectorXd noise_stds_;  // per feature; empty when there is no noise
};

}  // namespace dfmpc::envs

#endif  // DFMPC_ENVS_SRC_ENV_PERTURBATION_H_
