#include "perturbed_model.h"

#include <utility>

namespace dfmpc::envs {
namespace {

bool SameScales(const Perturbation& a, const Perturbation& b) {
  return a.gain == b.gain && a.mass == b.mass && a.damping == b.damping && a.friction == b.friction;
}

void ScaleEach(mjtNum* values, int count, int stride, int used, double scale) {
  for (int i = 0; i < count; ++i) {
    for (int j = 0; j < used; ++j) values[i * stride + j] *= scale;
  }
}

}  // namespace

PerturbedModel::PerturbedModel(std::shared_ptr<const mjModel> nominal)
    : nominal_(std::move(nominal)) {}

void PerturbedModel::Apply(const Perturbation& perturbation) {
  if (SameScales(perturbation, applied_)) return;
  applied_ = perturbation;
  scaled_active_ = !SameScales(perturbation, Perturbation());
  if (!scaled_active_) return;
  mjModel* m = mj_copyModel(scaled_.release(), nominal_.get());
  scaled_.reset(m);
  ScaleEach(m->actuator_gainprm, m->nu, mjNGAIN, 3, perturbation.gain);
  ScaleEach(m->actuator_biasprm, m->nu, mjNBIAS, 3, perturbation.gain);
  // Body 0 is the world.
  ScaleEach(m->body_mass + 1, m->nbody - 1, 1, 1, perturbation.mass);
  ScaleEach(m->body_inertia + 3, m->nbody - 1, 3, 3, perturbation.mass);
  ScaleEach(m->dof_damping, m->nv, 1, 1, perturbation.damping);
  ScaleEach(m->geom_friction, m->ngeom, 3, 3, perturbation.friction);
  ScaleEach(m->pair_friction, m->npair, 5, 5, perturbation.friction);
  ScaleEach(m->dof_frictionloss, m->nv, 1, 1, perturbation.friction);
  if (perturbation.mass != 1.0) {
    // Inverse weights, mean inertia and the like, as the compiler sets them.
    const DataPtr scratch(mj_makeData(m));
    mj_setConst(m, scratch.get());
  }
}

}  // namespace dfmpc::envs
