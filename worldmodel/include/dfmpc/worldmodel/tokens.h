// Tokens for planning: one control step is the bundle x_t = [a_{t-1}, o_t]
// (the action that led to the observation, then the observation), optionally
// followed by the observation's change d_t = o_t - o_{t-1}, normalized per
// feature with statistics stored in the model checkpoint.
//
// Why the change: per-feature normalization turns the small step-to-step
// change into a unit-scale target, so a denoiser's relative error becomes a
// small absolute error (the reason learned dynamics models predict deltas).
// Generated observations are then read as the last real observation plus
// the summed changes; the absolute part still tells the model the state.
#ifndef DFMPC_WORLDMODEL_TOKENS_H_
#define DFMPC_WORLDMODEL_TOKENS_H_

#include <ATen/core/Tensor.h>

#include <vector>

namespace dfmpc::worldmodel {

struct TokenLayout {
  int action_dim = 0;
  int observation_dim = 0;
  bool observation_deltas = false;  // append d_t = o_t - o_{t-1}

  int token_dim() const {
    return action_dim + observation_dim * (observation_deltas ? 2 : 1);
  }
  // Column of the first observation feature (actions come first).
  int observation_offset() const { return action_dim; }
  // Column of the first change feature (when observation_deltas).
  int delta_offset() const { return action_dim + observation_dim; }
};

// The L + 1 tokens of an episode with observations o_0 .. o_L ([L + 1, obs])
// and actions a_0 .. a_{L-1} ([L, act]). Token 0 carries a zero action (and a
// zero change). Throws std::invalid_argument on shapes that do not match.
at::Tensor EpisodeTokens(const TokenLayout& layout, const at::Tensor& observations,
                         const at::Tensor& actions);

// Observations [..., H, obs] of H consecutive unnormalized tokens
// [..., H, d]. With changes in the layout they are `previous` ([..., obs],
// the observation before the first token) plus the running sum of the
// changes; otherwise the tokens' observation features.
at::Tensor TokenObservations(const TokenLayout& layout, const at::Tensor& tokens,
                             const at::Tensor& previous);

// Per-feature affine normalization x_n = (x - mean) / scale.
class Normalizer {
 public:
  Normalizer() = default;
  // mean and scale: [d] float; scale entries must be positive and finite.
  Normalizer(at::Tensor mean, at::Tensor scale);

  // Mean and standard deviation over every token of `sequences` ([T_i, d]);
  // standard deviations below `min_scale` (constant features) are raised to
  // it so normalization never divides by ~0.
  static Normalizer Fit(const std::vector<at::Tensor>& sequences, double min_scale = 1e-2);

  int dim() const { return mean_.defined() ? static_cast<int>(mean_.size(0)) : 0; }
  const at::Tensor& mean() const { return mean_; }
  const at::Tensor& scale() const { return scale_; }

  // The same statistics on `device` (a no-op where they already are).
  Normalizer To(c10::Device device) const;

  // Work on [..., d] tensors on any device.
  at::Tensor Normalize(const at::Tensor& x) const;
  at::Tensor Denormalize(const at::Tensor& x) const;

 private:
  at::Tensor mean_;
  at::Tensor scale_;
};

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_TOKENS_H_
