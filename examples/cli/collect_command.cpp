// dfmpc collect: roll a baseline policy out in a task and store the
// trajectories as an HDF5 dataset (format: envs/DATASET.md).
#include <CLI/CLI.hpp>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>

#include "commands.h"
#include "dfmpc/envs/dataset.h"
#include "dfmpc/envs/env.h"
#include "dfmpc/envs/episode.h"
#include "dfmpc/envs/policy.h"
#include "output_path.h"
#include "perturbation_flags.h"
#include "progress_bar.h"

namespace dfmpc::cli {
namespace {

struct CollectOptions {
  std::string task;
  int episodes = 10;
  std::string policy = "mixed";
  std::string out;
  std::uint64_t seed = 0;
  std::string frames;  // "WxH" or empty
  int action_repeat = 1;
  int episode_physics_steps = envs::kEpisodePhysicsSteps;
  int threads = 1;
  PerturbationFlags perturbation;
};

// What video models are trained on (`collect --frames` alone).
constexpr char kDefaultFrameSize[] = "64x64";

volatile std::sig_atomic_t interrupted = 0;
void OnInterrupt(int) { interrupted = 1; }

// Parses "64x48" into width and height.
void ParseFrameSize(const std::string& text, int* width, int* height) {
  const std::size_t x = text.find('x');
  try {
    if (x == std::string::npos) throw std::invalid_argument("");
    std::size_t used = 0;
    *width = std::stoi(text.substr(0, x), &used);
    if (used != x) throw std::invalid_argument("");
    *height = std::stoi(text.substr(x + 1), &used);
    if (used != text.size() - x - 1) throw std::invalid_argument("");
  } catch (const std::exception&) {
    throw std::invalid_argument("--frames expects WIDTHxHEIGHT, e.g. 64x64, not '" + text + "'");
  }
  if (*width < 1 || *height < 1) throw std::invalid_argument("--frames sizes must be positive");
}

// Episode i of a run with seed s is reset with seed s * 1000003 + i, so runs
// with different seeds do not share episodes.
std::uint64_t EpisodeSeed(std::uint64_t seed, int episode) { return seed * 1000003ULL + episode; }

void RunCollect(const CollectOptions& o) {
  if (o.episodes < 1) throw std::invalid_argument("--episodes must be >= 1");
  int width = 0, height = 0;
  if (!o.frames.empty()) ParseFrameSize(o.frames, &width, &height);
  envs::EnvOptions env_options;
  env_options.action_repeat = o.action_repeat;
  env_options.episode_physics_steps = o.episode_physics_steps;
  env_options.perturbation = PerturbationFromFlags(o.perturbation);
  auto env = envs::MakeEnv(o.task, env_options);
  auto policy = envs::MakeBaselinePolicy(o.policy, *env, o.seed, o.threads);

  envs::DatasetInfo info;
  info.task = o.task;
  info.policy = o.policy;
  info.seed = o.seed;
  info.observation_size = env->observation_spec().size();
  info.action_size = env->action_spec().size();
  info.action_repeat = o.action_repeat;
  info.control_timestep = env->control_timestep();
  info.episode_physics_steps = o.episode_physics_steps;
  info.frame_width = width;
  info.frame_height = height;
  info.perturbation = env_options.perturbation;
  envs::DatasetWriter writer(o.out, info);

  interrupted = 0;
  auto previous_int = std::signal(SIGINT, OnInterrupt);
  auto previous_term = std::signal(SIGTERM, OnInterrupt);
  ProgressBar progress("collect " + o.task, static_cast<long long>(o.episodes) * env->episode_length());
  long long steps_before = 0;
  double return_sum = 0.0;
  try {
    for (int i = 0; i < o.episodes; ++i) {
      envs::RunOptions run;
      run.frame_width = width;
      run.frame_height = height;
      run.on_step = [&](int steps) {
        if (interrupted) throw std::runtime_error("interrupted: no dataset written");
        progress.Update(steps_before + steps, "episode " + std::to_string(i + 1) + "/" +
                                                  std::to_string(o.episodes));
      };
      const envs::Episode episode = envs::RunEpisode(*env, *policy, EpisodeSeed(o.seed, i), run);
      writer.Append(episode);
      steps_before += episode.length();
      return_sum += episode.Return();
    }
    writer.Commit();
  } catch (...) {
    std::signal(SIGINT, previous_int);
    std::signal(SIGTERM, previous_term);
    std::fputc('\n', stderr);
    throw;
  }
  std::signal(SIGINT, previous_int);
  std::signal(SIGTERM, previous_term);
  progress.Update(steps_before);
  progress.Finish();
  std::printf("wrote %s: %d episodes, %lld steps, mean return %.1f, %.0f control steps/s\n",
              o.out.c_str(), o.episodes, steps_before, return_sum / o.episodes,
              progress.Rate(steps_before));
}

}  // namespace

void AddCollectCommand(CLI::App& app) {
  auto options = std::make_shared<CollectOptions>();
  CLI::App* cmd = app.add_subcommand("collect", "Roll out a baseline policy and save an HDF5 dataset");
  cmd->add_option("--task", options->task, "task name")
      ->required()
      ->check(CLI::IsMember(envs::TaskNames()));
  cmd->add_option("--episodes", options->episodes, "episodes to collect")->capture_default_str();
  cmd->add_option("--policy", options->policy, "random, oracle, or mixed (noisy oracle with random segments)")
      ->check(CLI::IsMember(envs::BaselinePolicyNames()))
      ->capture_default_str();
  cmd->add_option("--out", options->out, "output .h5 file (written atomically)")
      ->required()
      ->check(OutputFileInExistingDirectory());
  cmd->add_option("--seed", options->seed, "seed of the episodes and the policy")->capture_default_str();
  CLI::Option* frames = cmd->add_option(
      "--frames", options->frames,
      "also store frames rendered from the task's fixed camera, WIDTHxHEIGHT (alone: 64x64)");
  frames->expected(0, 1);
  cmd->add_option("--action-repeat", options->action_repeat, "physics steps per control step")
      ->capture_default_str();
  cmd->add_option("--episode-physics-steps", options->episode_physics_steps,
                  "simulated time of an episode in physics steps (dm_control: 1000); a "
                  "multiple of --action-repeat")
      ->capture_default_str();
  cmd->add_option("--threads", options->threads, "oracle rollout threads")->capture_default_str();
  AddPerturbationFlags(*cmd, options->perturbation);
  cmd->callback([options, frames] {
    if (frames->count() > 0 && options->frames.empty()) options->frames = kDefaultFrameSize;
    RunCollect(*options);
  });
}

}  // namespace dfmpc::cli
