// Observation noise as a pure function of (key, step, feature), so an
// observation can be recomputed at any time and a restored state observes
// exactly what the original did.
#ifndef DFMPC_ENVS_SRC_OBSERVATION_NOISE_H_
#define DFMPC_ENVS_SRC_OBSERVATION_NOISE_H_

#include <Eigen/Core>
#include <cstdint>

namespace dfmpc::envs {

// Adds to feature i of the observation of control step `step` the std
// `stds[i]` times a standard normal drawn (Box-Muller) from outputs
// 2n and 2n + 1 of a SplitMix64 generator seeded with `key`, where
// n = step * size + i.
void AddObservationNoise(std::uint64_t key, int step, const Eigen::VectorXd& stds,
                         Eigen::Ref<Eigen::VectorXd> observation);

}  // namespace dfmpc::envs

#endif  // DFMPC_ENVS_SRC_OBSERVATION_NOISE_H_
