// Per-token training timesteps for diffusion forcing (internal).
#ifndef DFMPC_WORLDMODEL_SRC_TRAINING_NOISE_H_
#define DFMPC_WORLDMODEL_SRC_TRAINING_NOISE_H_

#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>

#include <cstdint>

namespace dfmpc::worldmodel {

// [count, window] int64: every token its own timestep, -1 (clean) with
// probability clean_prob, else floor(num_timesteps * v^power) with v uniform
// in [0, 1): uniform for power 1, biased to low noise for power > 1.
at::Tensor IndependentTimesteps(int64_t count, int64_t window, int64_t num_timesteps,
                                double clean_prob, double power, at::Generator& gen);

// [count, window] int64 in the pattern pyramid sampling produces: a clean
// prefix of random length, then timesteps rising from a random start by a
// random slope (0 .. num_timesteps / 4 per token), capped at the last one.
at::Tensor PyramidTimesteps(int64_t count, int64_t window, int64_t num_timesteps,
                            at::Generator& gen);

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_SRC_TRAINING_NOISE_H_
