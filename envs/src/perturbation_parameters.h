// The table of perturbation parameters shared by the perturbation sources:
// names, kinds, defaults and where each lives in a PerturbationSpec.
#ifndef DFMPC_ENVS_SRC_PERTURBATION_PARAMETERS_H_
#define DFMPC_ENVS_SRC_PERTURBATION_PARAMETERS_H_

#include <array>
#include <string>

#include "dfmpc/envs/perturbation.h"

namespace dfmpc::envs {

enum class ParameterKind {
  kStd,    // >= 0
  kDelay,  // a whole number of control steps in 0..kMaxActionDelay
  kScale,  // > 0
};

struct ParameterInfo {
  const char* name;
  ParameterKind kind;
  double nominal;
  PerturbationRange PerturbationSpec::*range;
  const char* meaning;
};

// In PerturbationNames() order.
inline constexpr std::array<ParameterInfo, 7> kParameters = {{
    {"obs_noise", ParameterKind::kStd, 0.0, &PerturbationSpec::obs_noise,
     "std of Gaussian noise added to every observation feature"},
    {"obs_noise_rel", ParameterKind::kStd, 0.0, &PerturbationSpec::obs_noise_rel,
     "std of that noise as a fraction of each feature's scale"},
    {"delay", ParameterKind::kDelay, 0.0, &PerturbationSpec::delay,
     "control steps between commanding an action and applying it"},
    {"gain", ParameterKind::kScale, 1.0, &PerturbationSpec::gain, "actuator force scale"},
    {"mass", ParameterKind::kScale, 1.0, &PerturbationSpec::mass, "body mass and inertia scale"},
    {"damping", ParameterKind::kScale, 1.0, &PerturbationSpec::damping, "joint damping scale"},
    {"friction", ParameterKind::kScale, 1.0, &PerturbationSpec::friction,
     "geom friction and joint friction-loss scale"},
}};

// Throws std::invalid_argument naming the parameter when `value` is not
// valid for it (see ValidatePerturbation).
void CheckParameterValue(const ParameterInfo& parameter, double value);

// The shortest decimal text that parses back to `value`.
std::string FormatNumber(double value);

}  // namespace dfmpc::envs

#endif  // DFMPC_ENVS_SRC_PERTURBATION_PARAMETERS_H_
