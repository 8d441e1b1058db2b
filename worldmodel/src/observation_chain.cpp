#include "dfmpc/worldmodel/observation_chain.h"

#include <ATen/ATen.h>

#include <stdexcept>
#include <string>

namespace dfmpc::worldmodel {

ObservationChain::ObservationChain(const TokenLayout& layout, const Normalizer& normalizer)
    : token_dim_(layout.token_dim()),
      observation_offset_(layout.observation_offset()),
      delta_offset_(layout.delta_offset()),
      observation_dim_(layout.observation_dim) {
  if (!layout.observation_deltas) {
    throw std::invalid_argument(
        "ObservationChain: the token layout has no change features to link");
  }
  if (normalizer.dim() != layout.token_dim()) {
    throw std::invalid_argument("ObservationChain: normalizer has " +
                                std::to_string(normalizer.dim()) + " features, tokens have " +
                                std::to_string(layout.token_dim()));
  }
  const at::Tensor observation_scale =
      normalizer.scale().narrow(0, observation_offset_, observation_dim_);
  gain_ = normalizer.scale().narrow(0, delta_offset_, observation_dim_) / observation_scale;
  offset_ = normalizer.mean().narrow(0, delta_offset_, observation_dim_) / observation_scale;
}

void ObservationChain::Link(const at::Tensor& previous, at::Tensor token) const {
  const at::Tensor change = token.narrow(-1, delta_offset_, observation_dim_);
  token.narrow(-1, observation_offset_, observation_dim_)
      .copy_(previous.narrow(-1, observation_offset_, observation_dim_) +
             change * gain_.to(token.device()) + offset_.to(token.device()));
}

}  // namespace dfmpc::worldmodel
