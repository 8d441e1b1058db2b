// dfmpc eval: closed-loop returns of a policy over several episodes.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "commands.h"
#include "dfmpc/envs/env.h"
#include "dfmpc/envs/episode.h"
#include "dfmpc/envs/policy.h"
#include "dfmpc/task/task_spec.h"
#include "model_policies.h"
#include "output_path.h"
#include "perturbation_flags.h"
#include "progress_bar.h"
#include "statistics.h"
#include "summary.h"
#include "table.h"
#include "task_option.h"

namespace dfmpc::cli {
namespace {

struct EvalOptions {
  std::string task;
  std::string policy = "oracle";
  int episodes = 10;
  std::uint64_t seed = 0;
  int action_repeat = 0;  // 0: the model's for dfmpc and mlp-mppi, else the task's
  int threads = 1;
  std::string csv;
  std::string summary;   // a CSV summary to append a row to
  std::string label;     // of that row; empty: the policy name
  PlannerFlags planner;  // for --policy dfmpc
  MlpMppiFlags mppi;     // for --policy mlp-mppi
  PerturbationFlags perturbation;
};

std::vector<std::string> EvalPolicyNames() {
  std::vector<std::string> names = envs::BaselinePolicyNames();
  for (const std::string& name : ModelPolicyNames()) names.push_back(name);
  return names;
}

bool IsModelPolicy(const std::string& name) {
  const std::vector<std::string> names = ModelPolicyNames();
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::vector<double> LatenciesMs(const TimedPolicy& policy) {
  std::vector<double> latencies;
  for (const StepRecord& r : policy.records()) latencies.push_back(r.latency_ms);
  return latencies;
}

// Latency and work per control step of a model policy over every episode.
void PrintModelCost(const std::string& name, const TimedPolicy& policy) {
  const std::vector<double> latencies = LatenciesMs(policy);
  double forwards = 0.0;
  for (const StepRecord& r : policy.records()) {
    forwards += static_cast<double>(r.token_forwards) / policy.records().size();
  }
  std::printf(
      "%s per control step: latency p50 %.2f ms, p99 %.2f ms, "
      "%.1f token-forwards\n",
      name.c_str(), Percentile(latencies, 50), Percentile(latencies, 99), forwards);
  if (!policy.reset_ms().empty()) {
    std::printf("%s reset (the first plan): p50 %.2f ms, max %.2f ms over %zu episode(s)\n",
                name.c_str(), Percentile(policy.reset_ms(), 50), Percentile(policy.reset_ms(), 100),
                policy.reset_ms().size());
  }
}

std::string Label(const EvalOptions& o) { return o.label.empty() ? o.policy : o.label; }

// What the run's episodes add up to.
struct EvalTotals {
  double return_mean = 0.0, return_std = 0.0;
  double action_change = 0.0, action_magnitude = 0.0;  // means over the episodes
  int successes = 0;
  int unstable_episodes = 0;  // with MuJoCo warnings
};

// Appends the run's row to --summary; `planner` is null for a baseline policy.
void AppendToSummary(const EvalOptions& o, const envs::Env& env,
                     const envs::PerturbationSpec& perturbation, const EvalTotals& totals,
                     const TimedPolicy* planner) {
  SummaryRow row;
  row.task = o.task;
  row.policy = o.policy;
  row.label = Label(o);
  row.episodes = o.episodes;
  row.seed = o.seed;
  row.action_repeat = env.action_repeat();
  row.return_mean = totals.return_mean;
  row.return_std = totals.return_std;
  row.action_change = totals.action_change;
  row.action_magnitude = totals.action_magnitude;
  if (env.has_success_metric()) {
    row.success_rate = static_cast<double>(totals.successes) / o.episodes;
  }
  if (planner) {
    const std::vector<double> latencies = LatenciesMs(*planner);
    row.latency_p50_ms = Percentile(latencies, 50);
    row.latency_p99_ms = Percentile(latencies, 99);
  }
  // The summary is a plain CSV: the spec's commas become spaces.
  row.perturbation = envs::FormatPerturbation(perturbation);
  std::replace(row.perturbation.begin(), row.perturbation.end(), ',', ' ');
  AppendSummaryRow(o.summary, row);
  std::fprintf(stderr, "appended a row to %s\n", o.summary.c_str());
}

void RunEval(EvalOptions o) {
  std::optional<task::TaskSpec> spec;
  if (o.task.empty() && IsModelPolicy(o.policy)) spec = NamedModelTask(o.policy, o.planner, o.mppi);
  if (!spec && o.task.empty()) {
    throw std::invalid_argument("--task is required (policy " + o.policy +
                                " without a model file to take it from)");
  }
  if (!spec) spec = task::LoadTaskSpec(o.task);
  o.task = spec->name;
  if (o.episodes < 1) throw std::invalid_argument("--episodes must be >= 1");
  if (o.action_repeat < 0) throw std::invalid_argument("--action-repeat must be >= 0");
  if (!o.summary.empty()) CheckSummaryAppendable(o.summary, Label(o));
  envs::EnvOptions env_options;
  env_options.perturbation = PerturbationFromFlags(o.perturbation);
  std::unique_ptr<TimedPolicy> planner;
  if (IsModelPolicy(o.policy)) planner = MakeModelPolicy(o.policy, o.planner, o.mppi, *spec);
  // 0 for a baseline: the task file's, as `collect` reads it.
  env_options.action_repeat =
      planner ? ModelActionRepeat(*planner, o.action_repeat) : o.action_repeat;
  auto env = envs::MakeEnv(*spec, env_options);
  std::unique_ptr<envs::Policy> baseline;
  if (!planner) baseline = envs::MakeBaselinePolicy(o.policy, *env, o.seed, o.threads);
  envs::Policy& policy = planner ? static_cast<envs::Policy&>(*planner) : *baseline;

  std::vector<std::string> header = {"episode",     "seed",       "return",         "success",
                                     "mean_abs_da", "mean_abs_a", "mujoco_warnings"};
  for (const std::string& name : envs::PerturbationNames()) header.push_back(name);
  Table table(header);
  std::vector<double> returns;
  EvalTotals totals;
  ProgressBar progress("eval " + o.policy + " on " + o.task,
                       static_cast<long long>(o.episodes) * env->episode_length());
  long long steps_before = 0;
  for (int i = 0; i < o.episodes; ++i) {
    // Same episode seeds as `dfmpc collect --seed`, so runs line up.
    const std::uint64_t seed = o.seed * 1000003ULL + i;
    envs::RunOptions run;
    const std::string note = "episode " + std::to_string(i + 1) + "/" + std::to_string(o.episodes);
    run.on_step = [&](int steps) { progress.Update(steps_before + steps, note); };
    const envs::Episode episode = envs::RunEpisode(*env, policy, seed, run);
    steps_before += episode.length();
    returns.push_back(episode.Return());
    totals.successes += episode.success;
    totals.action_change += episode.MeanActionChange() / o.episodes;
    totals.action_magnitude += episode.MeanActionMagnitude() / o.episodes;
    std::vector<std::string> row = {
        std::to_string(i),
        std::to_string(seed),
        FormatFixed(episode.Return(), 1),
        env->has_success_metric() ? (episode.success ? "yes" : "no") : "-",
        FormatFixed(episode.MeanActionChange(), 3),
        FormatFixed(episode.MeanActionMagnitude(), 3),
        std::to_string(episode.simulation_warnings)};
    totals.unstable_episodes += episode.simulation_warnings > 0;
    for (const std::string& cell : PerturbationCells(episode.perturbation)) row.push_back(cell);
    table.AddRow(row);
  }
  progress.Finish();
  table.Print(std::cout);
  for (double r : returns) totals.return_mean += r / returns.size();
  double variance = 0.0;
  for (double r : returns) {
    variance += (r - totals.return_mean) * (r - totals.return_mean) / returns.size();
  }
  totals.return_std = std::sqrt(variance);
  std::printf("%s %s: mean return %.1f, std %.1f over %d episodes", o.task.c_str(),
              o.policy.c_str(), totals.return_mean, totals.return_std, o.episodes);
  if (env->has_success_metric()) {
    std::printf(", success rate %.0f%%", 100.0 * totals.successes / o.episodes);
  }
  std::printf("\n%s %s: mean |da| %.3f, mean |a| %.3f per control step\n", o.task.c_str(),
              o.policy.c_str(), totals.action_change, totals.action_magnitude);
  if (totals.unstable_episodes > 0) {
    std::printf(
        "warning: the simulation went unstable (MuJoCo warnings) in %d of %d episodes "
        "(column mujoco_warnings); their returns are suspect\n",
        totals.unstable_episodes, o.episodes);
  }
  // "planner" is the label scripts and tests read for dfmpc.
  if (planner) PrintModelCost(o.policy == "dfmpc" ? "planner" : o.policy, *planner);
  if (!o.csv.empty()) {
    table.WriteCsv(o.csv);
    std::fprintf(stderr, "wrote %s\n", o.csv.c_str());
  }
  if (!o.summary.empty()) {
    AppendToSummary(o, *env, env_options.perturbation, totals, planner.get());
  }
}

}  // namespace

void AddEvalCommand(CLI::App& app) {
  auto options = std::make_shared<EvalOptions>();
  CLI::App* cmd = app.add_subcommand("eval", "Evaluate a policy's returns on a task");
  cmd->add_option(
         "--task", options->task,
         "a built-in task or a task folder (default for dfmpc and mlp-mppi: the task of --model or "
         "--mlp-model)")
      ->check(TaskNameOrFolder());
  cmd->add_option("--policy", options->policy,
                  "random, oracle, mixed, dfmpc (the planner) or mlp-mppi (its MLP-ensemble peer)")
      ->check(CLI::IsMember(EvalPolicyNames()))
      ->capture_default_str();
  cmd->add_option("--episodes", options->episodes, "episodes")->capture_default_str();
  cmd->add_option("--seed", options->seed, "seed of the episodes and the policy")
      ->capture_default_str();
  cmd->add_option("--action-repeat", options->action_repeat,
                  "physics steps per control step (0: the model's for dfmpc and mlp-mppi, else the "
                  "task file's)")
      ->capture_default_str();
  cmd->add_option("--threads", options->threads, "oracle rollout threads")->capture_default_str();
  cmd->add_option("--csv", options->csv,
                  "also write the per-episode table (with each episode's perturbation) as CSV")
      ->check(OutputFileInExistingDirectory());
  cmd->add_option("--summary", options->summary,
                  "also append the run's row (mean and std return, success rate, latency) to "
                  "this CSV summary, creating it if missing; `dfmpc report` reads it")
      ->check(OutputFileInExistingDirectory());
  cmd->add_option("--label", options->label,
                  "the row's label in --summary, e.g. \"dfmpc warm r=1\" (default: the policy)");
  AddPlannerFlags(*cmd, options->planner, /*model_required=*/false);
  AddMlpMppiFlags(*cmd, options->mppi);
  AddPerturbationFlags(*cmd, options->perturbation);
  cmd->callback([options] { RunEval(*options); });
}

}  // namespace dfmpc::cli
