// The physical model of an environment under a perturbation's scales: the
// shared nominal model while every scale is 1, else a private copy rescaled
// from the nominal values (never from earlier scales).
#ifndef DFMPC_ENVS_SRC_PERTURBED_MODEL_H_
#define DFMPC_ENVS_SRC_PERTURBED_MODEL_H_

#include <mujoco/mujoco.h>

#include <memory>

#include "dfmpc/envs/perturbation.h"
#include "model_loader.h"

namespace dfmpc::envs {

class PerturbedModel {
 public:
  explicit PerturbedModel(std::shared_ptr<const mjModel> nominal);

  const mjModel* get() const { return scaled_active_ ? scaled_.get() : nominal_.get(); }

  // Applies the scales of `perturbation` (gain, mass, damping, friction; the
  // rest is not physics). A no-op when they are the ones applied.
  //   gain      actuator gain and bias parameters (gainprm[0..2], biasprm[0..2])
  //   mass      body_mass and body_inertia of every body but the world, then
  //             mj_setConst for the quantities derived from them
  //   damping   dof_damping
  //   friction  geom_friction, pair_friction and dof_frictionloss
  void Apply(const Perturbation& perturbation);

 private:
  std::shared_ptr<const mjModel> nominal_;
  ModelPtr scaled_;  // allocated when first needed
  bool scaled_active_ = false;
  Perturbation applied_;
};

}  // namespace dfmpc::envs

#endif  // DFMPC_ENVS_SRC_PERTURBED_MODEL_H_
