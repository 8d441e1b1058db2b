// dfmpc control: one closed-loop episode with the planner (or the MLP-MPPI
// peer, or the oracle), next to a random policy on the same initial state;
// prints returns and the models' per-step latency and writes a trajectory
// plot, a GIF of the episode and a per-step CSV.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "commands.h"
#include "dfmpc/envs/env.h"
#include "dfmpc/envs/episode.h"
#include "dfmpc/envs/image_io.h"
#include "dfmpc/envs/policy.h"
#include "dfmpc/task/task_spec.h"
#include "model_policies.h"
#include "perturbation_flags.h"
#include "progress_bar.h"
#include "statistics.h"
#include "table.h"
#include "task_option.h"
#include "trajectory_plot.h"

namespace dfmpc::cli {
namespace {

struct ControlOptions {
  std::string task;  // empty: the model's, else pendulum_swingup
  std::string policy = "dfmpc";
  PlannerFlags planner;
  MlpMppiFlags mppi;
  std::uint64_t seed = 0;
  int threads = 1;  // the oracle's rollout threads
  int steps = 0;  // 0: one dm_control episode (1000 physics steps)
  std::string out = "out/control";
  int frame_size = 128;
  int gif_every = 2;
  PerturbationFlags perturbation;
};

envs::Episode RunWithProgress(envs::Env& env, envs::Policy& policy, const std::string& label,
                              std::uint64_t seed, int frame_size) {
  ProgressBar progress(label, env.episode_length());
  envs::RunOptions run;
  run.frame_width = run.frame_height = frame_size;
  run.on_step = [&](int steps) { progress.Update(steps); };
  envs::Episode episode = envs::RunEpisode(env, policy, seed, run);
  progress.Finish("return " + FormatFixed(episode.Return(), 1));
  return episode;
}

// The step's reward and action, and its model calls' timing where `records`
// has them (the oracle's: none).
void WriteStepsCsv(const std::string& path, const envs::Episode& episode,
                   const std::vector<StepRecord>& records) {
  const bool timed = !records.empty();
  std::vector<std::string> header = {"step", "reward"};
  for (int a = 0; a < episode.actions.cols(); ++a) header.push_back("action" + std::to_string(a));
  if (timed) header.insert(header.end(), {"latency_ms", "calls", "token_forwards"});
  Table table(header);
  for (int t = 0; t < episode.length(); ++t) {
    std::vector<std::string> row = {std::to_string(t), FormatFixed(episode.rewards(t), 4)};
    for (int a = 0; a < episode.actions.cols(); ++a) {
      row.push_back(FormatFixed(episode.actions(t, a), 4));
    }
    if (timed) {
      row.insert(row.end(), {FormatFixed(records[t].latency_ms, 3),
                             std::to_string(records[t].calls),
                             std::to_string(records[t].token_forwards)});
    }
    table.AddRow(row);
  }
  table.WriteCsv(path);
}

// The timing cells of the control table (reset_ms .. token_forwards_per_step):
// the model policy's, or dashes for a policy without a model.
std::vector<std::string> TimingCells(const TimedPolicy* policy) {
  if (policy == nullptr || policy->records().empty()) {
    return std::vector<std::string>(6, "-");
  }
  std::vector<double> latencies;
  double forwards = 0.0, calls = 0.0;
  for (const StepRecord& r : policy->records()) {
    latencies.push_back(r.latency_ms);
    forwards += static_cast<double>(r.token_forwards) / policy->records().size();
    calls += static_cast<double>(r.calls) / policy->records().size();
  }
  // Reset makes the planner's first plan, before the loop; the first Act
  // then only reads it.
  return {FormatFixed(policy->reset_ms().empty() ? 0.0 : policy->reset_ms().back(), 2),
          FormatFixed(latencies.front(), 2),
          FormatFixed(Percentile(latencies, 50), 2),
          FormatFixed(Percentile(latencies, 99), 2),
          FormatFixed(calls, 2),
          FormatFixed(forwards, 1)};
}

void RunControl(ControlOptions o) {
  if (o.steps < 0) throw std::invalid_argument("--steps must be >= 0");
  if (o.frame_size < 0 || o.gif_every < 1) {
    throw std::invalid_argument("--frame-size must be >= 0 and --gif-every >= 1");
  }
  if (o.threads < 1) throw std::invalid_argument("--threads must be >= 1");
  const bool oracle = o.policy == "oracle";
  std::optional<task::TaskSpec> spec;
  if (o.task.empty() && !oracle) spec = NamedModelTask(o.policy, o.planner, o.mppi);
  if (!spec) spec = task::LoadTaskSpec(o.task.empty() ? "pendulum_swingup" : o.task);
  o.task = spec->name;
  envs::EnvOptions env_options;
  env_options.perturbation = PerturbationFromFlags(o.perturbation);
  std::unique_ptr<TimedPolicy> model_policy;
  if (!oracle) {
    model_policy = MakeModelPolicy(o.policy, o.planner, o.mppi, *spec, /*print_options=*/true);
    env_options.action_repeat = model_policy->action_repeat();
  }
  if (o.steps > 0) {
    // The oracle acts at the task file's rate, which its environment reads.
    if (oracle) env_options.action_repeat = envs::MakeEnv(*spec, env_options)->action_repeat();
    env_options.episode_physics_steps = o.steps * env_options.action_repeat;
  }
  auto env = envs::MakeEnv(*spec, env_options);
  std::unique_ptr<envs::Policy> oracle_policy;
  if (oracle) oracle_policy = envs::MakeBaselinePolicy("oracle", *env, o.seed, o.threads);
  envs::Policy& policy = oracle ? *oracle_policy : static_cast<envs::Policy&>(*model_policy);
  std::filesystem::create_directories(o.out);

  const std::string label =
      o.policy == "dfmpc" ? "dfmpc " + planner::PlanModeName(o.planner.Resolve(*spec).options.mode)
                          : o.policy;
  const envs::Episode planned =
      RunWithProgress(*env, policy, label + " on " + o.task, o.seed, o.frame_size);
  envs::RandomPolicy random(env->action_spec(), o.seed);
  const envs::Episode baseline = RunWithProgress(*env, random, "random on " + o.task, o.seed, 0);

  Table table({"policy", "return", "steps", "reset_ms", "first_act_ms", "latency_p50_ms",
               "latency_p99_ms", "calls_per_step", "token_forwards_per_step"});
  std::vector<std::string> row = {label, FormatFixed(planned.Return(), 1),
                                  std::to_string(planned.length())};
  for (const std::string& cell : TimingCells(model_policy.get())) row.push_back(cell);
  table.AddRow(row);
  table.AddRow({"random", FormatFixed(baseline.Return(), 1), std::to_string(baseline.length()), "-",
                "-", "-", "-", "-", "-"});
  table.Print(std::cout);
  if (!planned.perturbation.IsNominal()) {
    std::printf("perturbation of the episode (both policies): %s\n",
                envs::FormatPerturbation(planned.perturbation).c_str());
  }

  const std::string plot = o.out + "/trajectory.png", csv = o.out + "/steps.csv";
  WriteTrajectoryPlot(plot, o.task, env->control_timestep(),
                      {{label, &planned}, {"random", &baseline}});
  WriteStepsCsv(csv, planned,
                model_policy ? model_policy->records() : std::vector<StepRecord>{});
  std::fprintf(stderr, "wrote %s and %s\n", plot.c_str(), csv.c_str());
  if (o.frame_size > 0) {
    std::vector<std::vector<std::uint8_t>> frames;
    for (std::size_t i = 0; i < planned.frames.size(); i += o.gif_every) {
      frames.push_back(planned.frames[i]);
    }
    const std::string gif = o.out + "/episode.gif";
    const int centiseconds =
        std::max(2, static_cast<int>(100.0 * env->control_timestep() * o.gif_every + 0.5));
    envs::WriteGif(gif, frames, o.frame_size, o.frame_size, centiseconds);
    std::fprintf(stderr, "wrote %s (%zu frames)\n", gif.c_str(), frames.size());
  }
}

}  // namespace

void AddControlCommand(CLI::App& app) {
  auto options = std::make_shared<ControlOptions>();
  CLI::App* cmd = app.add_subcommand("control",
                                     "Run the planner (or its MLP-MPPI peer, or the oracle) in "
                                     "closed loop for one episode, next to a random policy");
  cmd->add_option(
         "--task", options->task,
         "a built-in task or a task folder (default: the task of --model or --mlp-model, else "
         "pendulum_swingup)")
      ->check(TaskNameOrFolder());
  std::vector<std::string> policies = ModelPolicyNames();
  policies.push_back("oracle");
  cmd->add_option("--policy", options->policy,
                  "dfmpc (the planner), mlp-mppi (its MLP-ensemble peer) or oracle (predictive "
                  "sampling on the true simulator, the task file's [oracle] table)")
      ->check(CLI::IsMember(policies))
      ->capture_default_str();
  AddPlannerFlags(*cmd, options->planner, /*model_required=*/false);
  AddMlpMppiFlags(*cmd, options->mppi);
  cmd->add_option("--seed", options->seed, "episode seed (initial state)")->capture_default_str();
  cmd->add_option("--threads", options->threads, "oracle rollout threads")->capture_default_str();
  cmd->add_option("--steps", options->steps,
                  "control steps in the episode (0: the task's episode, its "
                  "episode_physics_steps / action repeat)")
      ->capture_default_str();
  cmd->add_option("--out", options->out, "directory for trajectory.png, episode.gif, steps.csv")
      ->capture_default_str();
  cmd->add_option("--frame-size", options->frame_size, "GIF frame size in pixels (0: no GIF)")
      ->capture_default_str();
  cmd->add_option("--gif-every", options->gif_every, "keep every n-th frame in the GIF")
      ->capture_default_str();
  AddPerturbationFlags(*cmd, options->perturbation);
  cmd->callback([options] { RunControl(*options); });
}

}  // namespace dfmpc::cli
