// The host half of a transformer forward call (internal to the world
// model): everything that depends on host data, the timestep pattern, the
// window's positions and the cache's layout, resolved before any layer
// runs. DfTransformerImpl::Run then only launches device work over it, which
// is what lets ForwardGraphs capture that work as a CUDA graph and replay it
// with new inputs.
#ifndef DFMPC_WORLDMODEL_SRC_FORWARD_SETUP_H_
#define DFMPC_WORLDMODEL_SRC_FORWARD_SETUP_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "attention.h"
#include "dfmpc/worldmodel/kv_cache.h"

namespace dfmpc::worldmodel {

struct ForwardSetup {
  int64_t batch = 0;
  int64_t window = 0;
  // The distinct timesteps of the call ([U], on the model's device) and,
  // for each token, its row among them ([cond_batch * window]): the
  // conditioning is computed once per distinct timestep.
  at::Tensor unique_steps;
  at::Tensor inverse;
  int64_t cond_batch = 1;  // 1 when the batch shares its timesteps
  // With an outcome condition: [cond_batch, window, 1], 1 where a token is
  // not clean (the tokens the condition reaches).
  at::Tensor noisy;
  // With hidden clean actions: [cond_batch, window, token_dim], 0 at the
  // features a token hides (transformer.h), 1 elsewhere.
  at::Tensor read;
  // Under InferenceMode, instead: each token's conditioning rows,
  // [cond_batch * window, (6 depth + 2) width] (DfTransformerImpl::
  // ConditioningRows), gathered from the memo of this generation.
  at::Tensor modulation;
  int64_t conditioning_generation = 0;
  // Rotations: [0] the window's queries and keys at their absolute
  // positions (MakeWindowAngles), then the queries' at each distinct query
  // offset of the cache's segments (the sinks after eviction, kv_cache.h).
  // Query tables carry attention's scale 1 / sqrt(head_dim).
  std::vector<RotaryAngles> query_angles;
  at::Tensor future;  // [w, w] bool, FutureMask
  // Per layer: the cache's occupied segments, views into its storage.
  std::vector<std::vector<CacheSegment>> segments;
  // Per segment (the same in every layer): its entry of query_angles.
  std::vector<int> segment_angles;
};

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_SRC_FORWARD_SETUP_H_
