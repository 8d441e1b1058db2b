#include "dfmpc/envs/collect.h"

#include <stdexcept>

#include "dfmpc/envs/dataset.h"
#include "dfmpc/envs/episode.h"
#include "dfmpc/envs/policy.h"
#include "dfmpc/task/task_spec.h"

namespace dfmpc::envs {

std::uint64_t EpisodeSeed(std::uint64_t seed, int episode) { return seed * 1000003ULL + episode; }

namespace {

void CheckOptions(const CollectOptions& options) {
  if (options.episodes < 1) throw std::invalid_argument("collect: episodes must be >= 1");
  if (options.frame_width < 0 || options.frame_height < 0 ||
      (options.frame_width > 0) != (options.frame_height > 0)) {
    throw std::invalid_argument("collect: frame sizes must be both positive or both 0");
  }
}

// Rolls `policy` out in `env` (made from `spec` and options.env) and writes
// the dataset.
CollectSummary Collect(const std::string& path, const CollectOptions& options,
                       const task::TaskSpec& spec, Env& env, Policy& policy,
                       const std::function<void(long long, int)>& on_step) {
  DatasetInfo info;
  info.task = env.name();
  info.task_file = spec.toml_text;
  info.task_mjcf = spec.mjcf_text;
  info.policy = options.policy;
  info.seed = options.seed;
  info.observation_size = env.observation_spec().size();
  info.action_size = env.action_spec().size();
  info.action_repeat = env.action_repeat();
  info.control_timestep = env.control_timestep();
  info.episode_physics_steps = env.episode_length() * env.action_repeat();
  info.frame_width = options.frame_width;
  info.frame_height = options.frame_height;
  info.perturbation = options.env.perturbation;
  DatasetWriter writer(path, info);

  CollectSummary summary;
  double return_sum = 0.0;
  for (int i = 0; i < options.episodes; ++i) {
    RunOptions run;
    run.frame_width = options.frame_width;
    run.frame_height = options.frame_height;
    if (on_step) run.on_step = [&](int steps) { on_step(summary.steps + steps, i); };
    const Episode episode = RunEpisode(env, policy, EpisodeSeed(options.seed, i), run);
    writer.Append(episode);
    summary.steps += episode.length();
    summary.unstable_episodes += episode.simulation_warnings > 0;
    return_sum += episode.Return();
  }
  writer.Commit();
  summary.episodes = options.episodes;
  summary.mean_return = return_sum / options.episodes;
  return summary;
}

}  // namespace

CollectSummary CollectDataset(const std::string& path, const CollectOptions& options,
                              const std::function<void(long long, int)>& on_step) {
  CheckOptions(options);
  const task::TaskSpec spec = task::LoadTaskSpec(options.task);
  auto env = MakeEnv(spec, options.env);
  auto policy = MakeBaselinePolicy(options.policy, *env, options.seed, options.threads);
  return Collect(path, options, spec, *env, *policy, on_step);
}

CollectSummary CollectDataset(const std::string& path, const CollectOptions& options,
                              Policy& policy, const std::function<void(long long, int)>& on_step) {
  CheckOptions(options);
  const task::TaskSpec spec = task::LoadTaskSpec(options.task);
  auto env = MakeEnv(spec, options.env);
  return Collect(path, options, spec, *env, policy, on_step);
}

}  // namespace dfmpc::envs
