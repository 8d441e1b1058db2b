// dfmpc collect: roll a baseline policy, or the planner itself, out in a
// task and store the trajectories as an HDF5 dataset (format:
// envs/DATASET.md).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "commands.h"
#include "dfmpc/envs/collect.h"
#include "dfmpc/envs/env.h"
#include "dfmpc/envs/policy.h"
#include "dfmpc/task/task_spec.h"
#include "output_path.h"
#include "perturbation_flags.h"
#include "planner_policy.h"
#include "progress_bar.h"
#include "task_option.h"

namespace dfmpc::cli {
namespace {

struct CollectCommandOptions {
  envs::CollectOptions collect;
  std::string out;
  std::string frames;  // "WxH" or empty
  PerturbationFlags perturbation;
  PlannerFlags planner;  // for --policy dfmpc
};

// The planner's policy name: data from the planner itself.
constexpr char kPlannerPolicy[] = "dfmpc";

std::vector<std::string> CollectPolicyNames() {
  std::vector<std::string> names = envs::BaselinePolicyNames();
  names.push_back(kPlannerPolicy);
  return names;
}

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

void RunCollect(CollectCommandOptions o) {
  envs::CollectOptions& c = o.collect;
  if (!o.frames.empty()) ParseFrameSize(o.frames, &c.frame_width, &c.frame_height);
  c.env.perturbation = PerturbationFromFlags(o.perturbation);
  if (!o.planner.model.empty() && c.policy != kPlannerPolicy) {
    throw std::invalid_argument("--model is the planner's: it needs --policy dfmpc, not " +
                                c.policy);
  }
  std::unique_ptr<PlannerPolicy> planner;
  if (c.policy == kPlannerPolicy) {
    planner = MakePlannerPolicy(o.planner, task::LoadTaskSpec(c.task));
    c.env.action_repeat = ModelActionRepeat(*planner, c.env.action_repeat);
  }
  const long long total = static_cast<long long>(std::max(c.episodes, 0)) *
                          envs::MakeEnv(c.task, c.env)->episode_length();

  interrupted = 0;
  auto previous_int = std::signal(SIGINT, OnInterrupt);
  auto previous_term = std::signal(SIGTERM, OnInterrupt);
  ProgressBar progress("collect " + c.task, total);
  envs::CollectSummary summary;
  try {
    const auto on_step = [&](long long steps, int episode) {
      if (interrupted) throw std::runtime_error("interrupted: no dataset written");
      progress.Update(steps,
                      "episode " + std::to_string(episode + 1) + "/" + std::to_string(c.episodes));
    };
    summary = planner ? envs::CollectDataset(o.out, c, *planner, on_step)
                      : envs::CollectDataset(o.out, c, on_step);
  } catch (...) {
    std::signal(SIGINT, previous_int);
    std::signal(SIGTERM, previous_term);
    std::fputc('\n', stderr);
    throw;
  }
  std::signal(SIGINT, previous_int);
  std::signal(SIGTERM, previous_term);
  progress.Update(summary.steps);
  progress.Finish();
  std::printf("wrote %s: %d episodes, %lld steps, mean return %.1f, %.0f control steps/s\n",
              o.out.c_str(), summary.episodes, summary.steps, summary.mean_return,
              progress.Rate(summary.steps));
  if (summary.unstable_episodes > 0) {
    std::printf(
        "warning: the simulation went unstable (MuJoCo warnings) in %d of %d episodes; their "
        "steps are in the dataset\n",
        summary.unstable_episodes, summary.episodes);
  }
}

}  // namespace

void AddCollectCommand(CLI::App& app) {
  auto options = std::make_shared<CollectCommandOptions>();
  envs::CollectOptions& c = options->collect;
  CLI::App* cmd = app.add_subcommand(
      "collect", "Roll out a baseline policy or the planner and save an HDF5 dataset");
  cmd->add_option("--task", c.task, "a built-in task or a task folder")
      ->required()
      ->check(TaskNameOrFolder());
  cmd->add_option("--episodes", c.episodes, "episodes to collect")->capture_default_str();
  cmd->add_option("--policy", c.policy,
                  "random, oracle, mixed (noisy oracle with random segments), or dfmpc (the "
                  "planner with --model and the planner options: data from the planner itself, "
                  "docs/experiments.md, Data from the planner)")
      ->check(CLI::IsMember(CollectPolicyNames()))
      ->capture_default_str();
  cmd->add_option("--out", options->out, "output .h5 file (written atomically)")
      ->required()
      ->check(OutputFileInExistingDirectory());
  cmd->add_option("--seed", c.seed, "seed of the episodes and the policy")->capture_default_str();
  CLI::Option* frames = cmd->add_option(
      "--frames", options->frames,
      "also store frames rendered from the task's fixed camera, WIDTHxHEIGHT (alone: 64x64)");
  frames->expected(0, 1);
  cmd->add_option("--action-repeat", c.env.action_repeat,
                  "physics steps per control step (default: the task file's; dfmpc: the model's)");
  cmd->add_option("--episode-physics-steps", c.env.episode_physics_steps,
                  "simulated time of an episode in physics steps (default: the task file's; "
                  "dm_control: 1000); a multiple of --action-repeat");
  cmd->add_option("--threads", c.threads, "oracle rollout threads")->capture_default_str();
  AddPerturbationFlags(*cmd, options->perturbation);
  AddPlannerFlags(*cmd, options->planner, /*model_required=*/false);
  cmd->callback([options, frames] {
    if (frames->count() > 0 && options->frames.empty()) options->frames = kDefaultFrameSize;
    RunCollect(*options);
  });
}

}  // namespace dfmpc::cli
