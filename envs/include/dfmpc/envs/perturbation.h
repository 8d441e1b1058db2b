// Perturbations of an environment: what separates a real robot from the
// simulator. A PerturbationSpec gives every parameter a closed range
// [low, high]; a fixed value (for evaluation) is a range with low == high,
// a wider range is sampled anew for each episode (domain randomization for
// data collection). Parameters, in their fixed order:
//   obs_noise      std of Gaussian noise added to every observation feature (default 0)
//   obs_noise_rel  std of that noise as a fraction of each feature's scale (env.h; default 0)
//   delay          control steps between commanding an action and applying it (default 0)
//   gain           actuator force scale (default 1)
//   mass           body mass and inertia scale, all bodies but the world (default 1)
//   damping        joint damping scale (default 1)
//   friction       geom friction and joint friction-loss scale (default 1)
// Both noise terms may be set; they add as independent Gaussians, so feature
// i gets std sqrt(obs_noise^2 + (obs_noise_rel * scale_i)^2).
//
// Text form: "name=value,..." for fixed values and "name=low:high,..." for
// ranges, e.g. "obs_noise=0.03,damping=1.5" or "mass=0.7:1.3,delay=0:2".
// Ranges are sampled uniformly; the delay uniformly over its whole numbers.
#ifndef DFMPC_ENVS_PERTURBATION_H_
#define DFMPC_ENVS_PERTURBATION_H_

#include <cstdint>
#include <string>
#include <vector>

namespace dfmpc::envs {

// The longest action delay a spec may ask for, in control steps.
inline constexpr int kMaxActionDelay = 1000;

// The closed range [low, high] of one parameter.
struct PerturbationRange {
  double low = 0.0;
  double high = 0.0;
  bool fixed() const { return low == high; }
};

// The concrete perturbation of one episode.
struct Perturbation {
  double obs_noise = 0.0;
  double obs_noise_rel = 0.0;
  int delay = 0;
  double gain = 1.0;
  double mass = 1.0;
  double damping = 1.0;
  double friction = 1.0;

  bool IsNominal() const;
};

struct PerturbationSpec {
  PerturbationRange obs_noise{0.0, 0.0};
  PerturbationRange obs_noise_rel{0.0, 0.0};
  PerturbationRange delay{0.0, 0.0};
  PerturbationRange gain{1.0, 1.0};
  PerturbationRange mass{1.0, 1.0};
  PerturbationRange damping{1.0, 1.0};
  PerturbationRange friction{1.0, 1.0};

  // Every parameter fixed at its default: the unperturbed environment.
  bool IsNominal() const;
};

// The parameter names, in the fixed order above (the order of dataset and
// CSV columns and of the environment's extended state).
const std::vector<std::string>& PerturbationNames();
// One line per parameter: its name and meaning (for --help texts).
std::string DescribePerturbationParameters();

// A perturbation's values in PerturbationNames() order (the delay as a
// double), and back. PerturbationFromValues throws std::invalid_argument
// naming the parameter of a wrong count or an invalid value.
std::vector<double> PerturbationValues(const Perturbation& perturbation);
Perturbation PerturbationFromValues(const std::vector<double>& values);

// Throws std::invalid_argument naming the parameter: a NaN or infinite
// bound, low > high, a negative std, a scale <= 0, or a delay that is
// negative, not a whole number or above kMaxActionDelay.
void ValidatePerturbation(const PerturbationSpec& spec);

// The perturbation of the episode started with Env::Reset(seed): a pure
// function of (spec, seed), drawn from a random stream of its own (the
// task's initial state does not depend on it). Fixed parameters draw nothing.
Perturbation SamplePerturbation(const PerturbationSpec& spec, std::uint64_t seed);

// Parses the text form (empty text: the nominal spec). Throws
// std::invalid_argument naming the parameter: an unknown name (listing the
// known ones), a name given twice, malformed text, or an invalid value as in
// ValidatePerturbation.
PerturbationSpec ParsePerturbation(const std::string& text);
// The spec of `fixed` values (as `--perturb` gives them) together with the
// `randomized` ranges (as `--randomize` gives them). Throws
// std::invalid_argument naming the parameter when `fixed` holds a range or
// when a parameter is off its default in both.
PerturbationSpec MergePerturbations(const PerturbationSpec& fixed,
                                    const PerturbationSpec& randomized);
// The text form of the parameters off their defaults ("" when nominal), with
// the shortest numbers that parse back to the same values.
std::string FormatPerturbation(const PerturbationSpec& spec);
std::string FormatPerturbation(const Perturbation& perturbation);

}  // namespace dfmpc::envs

#endif  // DFMPC_ENVS_PERTURBATION_H_
