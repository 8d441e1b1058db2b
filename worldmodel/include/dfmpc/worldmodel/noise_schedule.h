// The diffusion noise schedule: training timesteps, alpha-bar, the mapping
// from K sampling levels to timesteps, DDIM steps and conversions between
// the v, x0 and eps parameterisations.
#ifndef DFMPC_WORLDMODEL_NOISE_SCHEDULE_H_
#define DFMPC_WORLDMODEL_NOISE_SCHEDULE_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

namespace dfmpc::worldmodel {

enum class BetaSchedule { kLinear, kCosine };
enum class Prediction { kV, kX0, kEps };

BetaSchedule ParseBetaSchedule(const std::string& name);
Prediction ParsePrediction(const std::string& name);
std::string PredictionName(Prediction prediction);

// Timestep -1 stands for "clean" (alpha-bar 1); 0 .. T-1 are the usual
// training timesteps. Level k of K sampling levels maps to timestep
// floor(-1 + k * T / K), as the Diffusion Forcing reference does, so level 0
// is clean and level K is timestep T-1 (almost pure noise).
class NoiseSchedule {
 public:
  explicit NoiseSchedule(int num_timesteps = 1000, BetaSchedule beta = BetaSchedule::kCosine);

  int num_timesteps() const { return num_timesteps_; }
  BetaSchedule beta_schedule() const { return beta_; }

  // alpha-bar at timestep t in [-1, T-1].
  double AlphaBar(int64_t timestep) const;
  // Timestep of sampling level `level` out of `num_levels`. Throws
  // std::invalid_argument for num_levels > num_timesteps() and
  // std::out_of_range for a level outside [0, num_levels].
  int64_t LevelTimestep(int level, int num_levels) const;

  // Forward diffusion: sqrt(ab) * x0 + sqrt(1 - ab) * noise, with ab broadcast
  // from `alpha_bar` (shape broadcastable to x0, e.g. [B, T, 1]).
  static at::Tensor AddNoise(const at::Tensor& x0, const at::Tensor& noise,
                             const at::Tensor& alpha_bar);

  // Converts a model output of kind `prediction` at noisy input x_t into
  // the clean estimate x0 and the noise estimate eps.
  static void ToX0AndEps(Prediction prediction, const at::Tensor& x_t,
                         const at::Tensor& model_out, const at::Tensor& alpha_bar,
                         at::Tensor* x0, at::Tensor* eps);
  // The training target of kind `prediction` for a clean x0 and its noise.
  static at::Tensor Target(Prediction prediction, const at::Tensor& x0, const at::Tensor& eps,
                           const at::Tensor& alpha_bar);

  // One DDIM step from alpha-bar `ab_from` to `ab_to` (both broadcastable to
  // x_t) given the clean and noise estimates. eta = 0 is deterministic; eta > 0
  // adds `noise` scaled by the DDIM sigma (noise may be undefined when eta = 0).
  static at::Tensor DdimStep(const at::Tensor& x0, const at::Tensor& eps,
                             const at::Tensor& ab_from, const at::Tensor& ab_to, double eta,
                             const at::Tensor& noise);

 private:
  int num_timesteps_;
  BetaSchedule beta_;
  std::vector<double> alpha_bar_;  // index t + 1 for t in [-1, T-1]
};

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_NOISE_SCHEDULE_H_
