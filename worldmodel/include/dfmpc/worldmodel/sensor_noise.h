// Sensor noise on the context tokens of training windows.
//
// A real robot's observations are noisy; the change feature d_t = o_t -
// o_{t-1} (tokens.h) magnifies that noise, because normalization scales the
// small per-step change to unit variance (on the pendulum an observation
// noise of 0.03 becomes 0.8 standard deviations of the change). A model
// trained only on exact simulator tokens reads such context as wild
// dynamics. Training with noisy context instead teaches it to filter: the
// clean tokens of a window (the context the model conditions on, as the
// planner's real tokens) are rebuilt from observations with Gaussian noise
// added, while the noisy tokens (what the model generates) keep the exact
// targets, so the model predicts the true future from noisy readings.
#ifndef DFMPC_WORLDMODEL_SENSOR_NOISE_H_
#define DFMPC_WORLDMODEL_SENSOR_NOISE_H_

#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>

#include <vector>

#include "dfmpc/worldmodel/tokens.h"

namespace dfmpc::worldmodel {

struct SensorNoise {
  // Every window draws its noise std uniformly from [0, max_std], in the
  // observation's own units (0: no sensor noise).
  double max_std = 0.0;
  int observation_offset = 0;
  // Normalizer scales of the observation features and, in layouts with
  // change features, of the changes (empty otherwise).
  std::vector<double> observation_scale;
  std::vector<double> delta_scale;
  int delta_offset = 0;

  bool enabled() const { return max_std > 0.0; }
  // Throws std::invalid_argument for a negative or non-finite std, or
  // scales that are missing or not positive while enabled.
  void Validate() const;
};

// The sensor noise of `layout`'s tokens normalized by `normalizer`.
SensorNoise MakeSensorNoise(const TokenLayout& layout, const Normalizer& normalizer,
                            double max_std);

// Normalized windows [B, L, d] rebuilt from observations with Gaussian noise
// of std `stds` ([B], one per window, in observation units): the
// observation features get the noise n_t, the change features n_t - n_{t-1}
// (n_{-1} is the noise of the observation before the window).
at::Tensor AddSensorNoise(const SensorNoise& noise, const at::Tensor& windows,
                          const at::Tensor& stds, at::Generator& gen);

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_SENSOR_NOISE_H_
