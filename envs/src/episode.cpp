#include "dfmpc/envs/episode.h"

namespace dfmpc::envs {

double Episode::MeanActionChange() const {
  if (actions.rows() < 2 || actions.cols() == 0) return 0.0;
  const Eigen::Index steps = actions.rows() - 1;
  return (actions.bottomRows(steps) - actions.topRows(steps)).cwiseAbs().mean();
}

double Episode::MeanActionMagnitude() const {
  return actions.size() == 0 ? 0.0 : actions.cwiseAbs().mean();
}

Episode RunEpisode(Env& env, Policy& policy, std::uint64_t seed, const RunOptions& options) {
  const int capacity = env.episode_length();
  const bool record_frames = options.frame_width > 0 && options.frame_height > 0;
  Episode episode;
  episode.observations.resize(capacity + 1, env.observation_spec().size());
  episode.actions.resize(capacity, env.action_spec().size());
  episode.rewards.resize(capacity);
  if (record_frames) episode.frames.reserve(capacity);

  Eigen::VectorXd observation = env.Reset(seed);
  episode.perturbation = env.perturbation();
  policy.Reset(observation);
  episode.observations.row(0) = observation.transpose();
  int steps = 0;
  while (steps < capacity) {
    if (record_frames)
      episode.frames.push_back(env.Render(options.frame_width, options.frame_height));
    const Eigen::VectorXd action = policy.Act(observation);
    const StepResult result = env.Step(action);
    const BoxSpec& spec = env.action_spec();
    episode.actions.row(steps) = action.cwiseMax(spec.lower).cwiseMin(spec.upper).transpose();
    episode.rewards[steps] = result.reward;
    episode.simulation_warnings += result.simulation_warnings;
    episode.success = episode.success || (env.has_success_metric() && env.IsSuccess());
    observation = result.observation;
    ++steps;
    episode.observations.row(steps) = observation.transpose();
    if (options.on_step) options.on_step(steps);
    episode.terminated = result.terminated;
    episode.truncated = result.truncated;
    if (result.terminated || result.truncated) break;
  }
  episode.observations.conservativeResize(steps + 1, Eigen::NoChange);
  episode.actions.conservativeResize(steps, Eigen::NoChange);
  episode.rewards.conservativeResize(steps);
  return episode;
}

}  // namespace dfmpc::envs
