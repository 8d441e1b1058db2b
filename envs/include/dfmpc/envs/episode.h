// Running one episode of a policy in an environment, recording everything
// datasets and evaluations need.
#ifndef DFMPC_ENVS_EPISODE_H_
#define DFMPC_ENVS_EPISODE_H_

#include <Eigen/Core>
#include <cstdint>
#include <functional>
#include <vector>

#include "dfmpc/envs/env.h"
#include "dfmpc/envs/policy.h"

namespace dfmpc::envs {

struct Episode {
  Eigen::MatrixXd observations;  // (length + 1) x observation size: o_0 .. o_T
  // length x action size: as commanded by the policy, clipped to the bounds
  // (under an action delay, each is applied `delay` steps later)
  Eigen::MatrixXd actions;
  Eigen::VectorXd rewards;  // length
  bool terminated = false;
  bool truncated = false;
  bool success = false;  // the task's success metric held at some step
  // MuJoCo warnings during the episode (StepResult::simulation_warnings):
  // > 0, its simulation went unstable at least once and its return is suspect.
  int simulation_warnings = 0;
  Perturbation perturbation;  // the episode's (Env::perturbation after Reset)
  // Optional RGB frames of o_0 .. o_{T-1}, frame_height * frame_width * 3 each.
  std::vector<std::vector<std::uint8_t>> frames;

  int length() const { return static_cast<int>(rewards.size()); }
  double Return() const { return rewards.sum(); }
  // How much the actions chatter: the mean over steps t >= 1 and action
  // components of |a_t - a_{t-1}| (0 for fewer than two steps).
  double MeanActionChange() const;
  // The mean over steps and components of |a_t| (0 for no step).
  double MeanActionMagnitude() const;
};

struct RunOptions {
  int frame_width = 0;  // > 0 together with frame_height: record frames
  int frame_height = 0;
  // Called after every control step with the number of steps taken.
  std::function<void(int)> on_step;
};

// Resets `env` with `seed`, then steps `policy` until termination or
// truncation.
Episode RunEpisode(Env& env, Policy& policy, std::uint64_t seed, const RunOptions& options = {});

}  // namespace dfmpc::envs

#endif  // DFMPC_ENVS_EPISODE_H_
