// Keeps a generated token's observation consistent with its change.
//
// With change features in the layout (tokens.h) a token carries its
// observation twice: as o_t and as o_{t-1} + d_t. Real tokens agree exactly;
// a denoiser generates the two parts separately, so their disagreement grows
// along a rollout, and the model then reads the state from an o_t that has
// drifted from the trajectory its changes describe. Linking rewrites o_t as
// the previous token's observation plus d_t, so every clean generated token
// is consistent again before later tokens attend to it (docs/design.md: about half
// the pendulum's 32-step prediction error).
#ifndef DFMPC_WORLDMODEL_OBSERVATION_CHAIN_H_
#define DFMPC_WORLDMODEL_OBSERVATION_CHAIN_H_

#include <ATen/core/Tensor.h>

#include "dfmpc/worldmodel/tokens.h"

namespace dfmpc::worldmodel {

class ObservationChain {
 public:
  // Throws std::invalid_argument unless the layout has change features and
  // the normalizer covers its token dimension.
  ObservationChain(const TokenLayout& layout, const Normalizer& normalizer);

  int token_dim() const { return token_dim_; }

  // Sets the observation features of `token` ([..., d], normalized, edited
  // in place) to those of `previous` ([..., d], normalized, broadcastable)
  // plus the token's change, all in normalized space.
  void Link(const at::Tensor& previous, at::Tensor token) const;

 private:
  int token_dim_;
  int observation_offset_;
  int delta_offset_;
  int observation_dim_;
  // In normalized units o_t = o_{t-1} + d_t * gain_ + offset_, where
  // gain_ = scale(d) / scale(o) and offset_ = mean(d) / scale(o).
  at::Tensor gain_;
  at::Tensor offset_;
};

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_OBSERVATION_CHAIN_H_
