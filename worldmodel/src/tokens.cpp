#include "dfmpc/worldmodel/tokens.h"

#include <ATen/ATen.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace dfmpc::worldmodel {

at::Tensor EpisodeTokens(const TokenLayout& layout, const at::Tensor& observations,
                         const at::Tensor& actions) {
  if (observations.dim() != 2 || actions.dim() != 2 ||
      observations.size(0) != actions.size(0) + 1 ||
      observations.size(1) != layout.observation_dim || actions.size(1) != layout.action_dim) {
    throw std::invalid_argument(
        "EpisodeTokens: need observations [L + 1, " + std::to_string(layout.observation_dim) +
        "] and actions [L, " + std::to_string(layout.action_dim) + "], got " +
        std::to_string(observations.dim() ? observations.size(0) : 0) + " observations and " +
        std::to_string(actions.dim() ? actions.size(0) : 0) + " actions");
  }
  const at::Tensor obs = observations.to(at::kFloat);
  const at::Tensor first_action = at::zeros({1, actions.size(1)}, at::kFloat);
  std::vector<at::Tensor> parts = {at::cat({first_action, actions.to(at::kFloat)}, 0), obs};
  if (layout.observation_deltas) {
    parts.push_back(at::cat({at::zeros({1, obs.size(1)}, at::kFloat), at::diff(obs, 1, 0)}, 0));
  }
  return at::cat(parts, 1);
}

at::Tensor TokenObservations(const TokenLayout& layout, const at::Tensor& tokens,
                             const at::Tensor& previous) {
  if (!layout.observation_deltas) {
    return tokens.narrow(-1, layout.observation_offset(), layout.observation_dim);
  }
  const at::Tensor changes = tokens.narrow(-1, layout.delta_offset(), layout.observation_dim);
  return previous.unsqueeze(-2) + changes.cumsum(-2);
}

Normalizer::Normalizer(at::Tensor mean, at::Tensor scale)
    : mean_(std::move(mean)), scale_(std::move(scale)) {
  if (mean_.dim() != 1 || scale_.sizes() != mean_.sizes()) {
    throw std::invalid_argument("Normalizer: mean and scale must be [d] vectors of equal size");
  }
  if (!at::isfinite(mean_).all().item<bool>() || !(scale_ > 0).all().item<bool>() ||
      !at::isfinite(scale_).all().item<bool>()) {
    throw std::invalid_argument("Normalizer: mean must be finite and scale positive and finite");
  }
}

Normalizer Normalizer::Fit(const std::vector<at::Tensor>& sequences, double min_scale) {
  if (sequences.empty()) throw std::invalid_argument("Normalizer::Fit: no sequences");
  const at::Tensor all = at::cat(sequences, 0).to(at::kDouble);
  if (all.size(0) < 2) throw std::invalid_argument("Normalizer::Fit: need at least 2 tokens");
  const at::Tensor mean = all.mean(0);
  const at::Tensor scale = all.std(0).clamp_min(min_scale);
  return Normalizer(mean.to(at::kFloat), scale.to(at::kFloat));
}

Normalizer Normalizer::To(c10::Device device) const {
  Normalizer moved;
  moved.mean_ = mean_.to(device);
  moved.scale_ = scale_.to(device);
  return moved;
}

at::Tensor Normalizer::Normalize(const at::Tensor& x) const {
  return (x - mean_.to(x.device())) / scale_.to(x.device());
}

at::Tensor Normalizer::Denormalize(const at::Tensor& x) const {
  return x * scale_.to(x.device()) + mean_.to(x.device());
}

}  // namespace dfmpc::worldmodel
