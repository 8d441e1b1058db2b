// Collecting a dataset: a policy (a baseline, or one the caller brings, such
// as the planner) rolled out for some episodes of a task, written as one HDF5
// file (format: envs/DATASET.md). What `dfmpc collect` and Python's
// dfmpc.collect run.
#ifndef DFMPC_ENVS_COLLECT_H_
#define DFMPC_ENVS_COLLECT_H_

#include <cstdint>
#include <functional>
#include <string>

#include "dfmpc/envs/env.h"

namespace dfmpc::envs {

class Policy;

struct CollectOptions {
  std::string task;
  int episodes = 10;
  std::string policy = "mixed";  // a BaselinePolicyNames() entry, or the caller's policy's name
  std::uint64_t seed = 0;        // of the episodes and the policy
  int frame_width = 0;           // > 0 with frame_height: store frames
  int frame_height = 0;
  EnvOptions env;   // action repeat, episode length, perturbations
  int threads = 1;  // the oracle's planning threads
};

struct CollectSummary {
  int episodes = 0;
  long long steps = 0;
  double mean_return = 0.0;
  // Episodes whose simulation raised MuJoCo warnings (Episode::simulation_warnings).
  int unstable_episodes = 0;
};

// Episode i of a collection with seed s is reset with seed s * 1000003 + i,
// so collections with different seeds share no episode.
std::uint64_t EpisodeSeed(std::uint64_t seed, int episode);

// Runs the collection and writes `path` whole, or nothing at all when
// anything throws. `on_step(steps, episode)`, when given, is called after
// every control step with the steps done so far and the episode's index;
// it may throw to stop the collection. Throws std::invalid_argument for
// impossible options (naming them) and what the environment, the policy and
// the writer throw.
CollectSummary CollectDataset(const std::string& path, const CollectOptions& options,
                              const std::function<void(long long, int)>& on_step = {});

// The same with the caller's `policy` in place of a baseline, recorded under
// the name options.policy (e.g. "dfmpc": data from the planner itself, which
// the planner's next model trains on). `policy` must be made for the
// environment options.env describes (its action repeat above all).
CollectSummary CollectDataset(const std::string& path, const CollectOptions& options,
                              Policy& policy,
                              const std::function<void(long long, int)>& on_step = {});

}  // namespace dfmpc::envs

#endif  // DFMPC_ENVS_COLLECT_H_
