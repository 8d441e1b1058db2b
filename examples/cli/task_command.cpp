// dfmpc task check | new: validate a task folder and show what it defines,
// or start one from the built-in pendulum's files.
#include <ATen/ATen.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "commands.h"
#include "dfmpc/envs/env.h"
#include "dfmpc/envs/episode.h"
#include "dfmpc/envs/policy.h"
#include "dfmpc/envs/predictive_sampling.h"
#include "dfmpc/planner/planner.h"
#include "dfmpc/planner/task_cost.h"
#include "dfmpc/task/task_spec.h"
#include "dfmpc/worldmodel/checkpoint.h"
#include "output_path.h"
#include "planner_policy.h"
#include "table.h"
#include "task_option.h"
#include "task_stamp.h"

namespace dfmpc::cli {
namespace {

namespace fs = std::filesystem;

std::string Number(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
}

void PrintObservations(const task::TaskSpec& spec, const envs::Env& env) {
  std::printf("observations (%d):\n", env.observation_spec().size());
  Table table({"index", "name", "sensor", "component", "scale", "bounds"});
  int index = 0;
  for (const task::TaskTable& feature : spec.root.Tables("observation")) {
    std::string sensor =
        feature.Text("sensor") + (feature.Has("minus") ? " - " + feature.Text("minus") : "");
    if (feature.Boolean("log1p", false)) sensor = "log1p(" + sensor + ")";
    const double lower = env.observation_spec().lower[index];
    const double upper = env.observation_spec().upper[index];
    table.AddRow({std::to_string(index), feature.Text("name"), sensor,
                  std::to_string(feature.Integer("index", 0)), Number(feature.Number("scale", 1.0)),
                  std::isfinite(lower) ? "[" + Number(lower) + ", " + Number(upper) + "]" : "-"});
    ++index;
  }
  table.Print(std::cout);
}

void PrintCost(const task::TaskSpec& spec) {
  std::string terms;
  for (const task::TaskTable& term : spec.root.Tables("cost")) {
    terms +=
        (terms.empty() ? "" : ", ") + term.Text("term") + " x " + Number(term.Number("weight"));
    if (term.Has("terminal_weight")) {
      terms += " (last step x " + Number(term.Number("terminal_weight")) + ")";
    }
  }
  std::printf("cost per plan step: %s\n", terms.c_str());
}

// What the reward formulas and each cost term give at the state seed 0
// starts from, before any action: a misread feature or scale shows here.
void PrintValuesAtStart(const task::TaskSpec& spec, envs::Env& env) {
  for (const auto& [where, value] : envs::FormulaValuesAtStart(spec, 0)) {
    std::printf("%s at the initial state (seed 0): %s\n", where.c_str(), Number(value).c_str());
  }
  const Eigen::VectorXd start = env.Reset(0);
  const at::Tensor observation =
      at::tensor(std::vector<double>(start.data(), start.data() + start.size()), at::kDouble)
          .view({1, 1, -1});
  const at::Tensor action = at::zeros({1, 1, env.action_spec().size()}, at::kDouble);
  const std::vector<task::TaskTable> tables = spec.root.Tables("cost");
  std::string parts;
  double total = 0.0;
  for (size_t i = 0; i < tables.size(); ++i) {
    const double value = planner::MakeTaskCostTerm(spec, static_cast<int>(i))
                             ->StepCosts(observation, action)
                             .item<double>();
    total += value;
    parts += (parts.empty() ? "" : " + ") + tables[i].Text("term") + " " + Number(value);
  }
  std::printf("cost at the initial state (seed 0, weighted): %s = %s\n", Number(total).c_str(),
              parts.c_str());
}

void RunCheck(const std::string& name_or_folder) {
  const auto start = std::chrono::steady_clock::now();
  const task::TaskSpec spec = task::LoadTaskSpec(name_or_folder);
  // Everything the file feeds is built, so every part of it is checked.
  const auto env = envs::MakeEnv(spec);
  const auto cost = planner::MakeTaskCost(spec);
  const planner::PlannerOptions tuned = planner::TunedPlannerOptions(spec);
  const envs::PredictiveSamplingOptions oracle = envs::OracleOptions(spec, env->action_repeat());

  std::printf("task %s: %s\n", spec.name.c_str(), spec.root.Text("description", "").c_str());
  std::printf("files: %s, %s\n", spec.file.c_str(), spec.mjcf_file.c_str());
  std::printf("control step %.4g s (%d physics step(s)), episode %d control steps (%.4g s)\n",
              env->control_timestep(), env->action_repeat(), env->episode_length(),
              env->episode_length() * env->control_timestep());
  PrintObservations(spec, *env);
  std::string actions;
  for (const std::string& actuator : spec.root.Texts("actions")) {
    actions += (actions.empty() ? "" : ", ") + actuator;
  }
  std::printf("actions (%d, each in [-1, 1]): %s\n", env->action_spec().size(), actions.c_str());
  PrintCost(spec);
  std::printf("planner: %s\n", DescribePlannerOptions(tuned).c_str());
  std::printf("oracle: horizon %d control steps, %d knots, %d samples, noise %.3g\n",
              oracle.horizon, oracle.num_knots, oracle.num_samples, oracle.noise_std);
  PrintValuesAtStart(spec, *env);
  envs::RandomPolicy random(env->action_spec(), 0);
  const envs::Episode episode = envs::RunEpisode(*env, random, 0);
  std::printf("random policy, seed 0: return %.1f%s\n", episode.Return(),
              env->has_success_metric() ? (episode.success ? ", success" : ", no success") : "");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("ok (%.3f s)\n", seconds);
}

// A new folder from the built-in pendulum's two files, renamed.
void RunNew(const std::string& name, const std::string& folder) {
  if (!task::IsTaskName(name)) {
    throw std::invalid_argument("task name '" + name +
                                "' must be 1-64 letters, digits, '_' or '-'");
  }
  if (fs::exists(folder) && !fs::is_empty(folder)) {
    throw std::invalid_argument("'" + folder + "' exists and is not empty");
  }
  const task::TaskSpec pendulum = task::LoadTaskSpec("pendulum_swingup");
  std::string toml = pendulum.toml_text;
  const std::string old_name = "name = \"pendulum_swingup\"";
  toml.replace(toml.find(old_name), old_name.size(), "name = \"" + name + "\"");
  fs::create_directories(folder);
  std::ofstream(fs::path(folder) / task::kTaskFileName) << toml;
  std::ofstream(fs::path(folder) / fs::path(pendulum.mjcf_file).filename()) << pendulum.mjcf_text;
  std::printf("wrote %s (the pendulum's files as a start; docs/your_robot.md explains each key)\n",
              folder.c_str());
  RunCheck(folder);
}

void RunStamp(const std::string& name_or_folder, const std::string& model, const std::string& out) {
  const task::TaskSpec spec = task::LoadTaskSpec(name_or_folder);
  const std::string format = StampTask(model, spec, out);
  std::printf("wrote %s: the %s of %s, carrying %s and its MJCF\n", out.c_str(), format.c_str(),
              model.c_str(), spec.file.c_str());
  if (format == "dfmpc-model") {
    // What Planner::FromFile will plan with: a distilled model keeps its K.
    planner::PlannerOptions options = planner::TunedPlannerOptions(spec);
    const int distilled_levels = worldmodel::LoadCheckpoint(out).info.sampling_levels;
    if (distilled_levels > 0) options = planner::AtLevels(options, distilled_levels);
    std::printf("planner: %s\n", DescribePlannerOptions(options).c_str());
  }
}

}  // namespace

void AddTaskCommand(CLI::App& app) {
  CLI::App* task = app.add_subcommand("task", "Check a task folder or start a new one");
  task->require_subcommand(1);

  auto checked = std::make_shared<std::string>();
  CLI::App* check = task->add_subcommand(
      "check",
      "Validate a task folder and print its observations, actions, cost and a random "
      "episode's return");
  check->add_option("task", *checked, "a built-in task or a task folder")
      ->required()
      ->check(TaskNameOrFolder());
  check->callback([checked] { RunCheck(*checked); });

  auto name = std::make_shared<std::string>();
  auto folder = std::make_shared<std::string>();
  CLI::App* create =
      task->add_subcommand("new", "Write a task folder to start from (the pendulum's files)");
  create->add_option("name", *name, "the new task's name")->required();
  create->add_option("folder", *folder, "where to write it (must not exist, or be empty)")
      ->required();
  create->callback([name, folder] { RunNew(*name, *folder); });

  auto stamped_task = std::make_shared<std::string>();
  auto model = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  CLI::App* stamp = task->add_subcommand(
      "stamp",
      "Give a model file a task's current files (after tuning its [planner] table or cost), "
      "without retraining; the name and the numbers of observations and actions must match");
  stamp->add_option("task", *stamped_task, "a built-in task or a task folder")
      ->required()
      ->check(TaskNameOrFolder());
  stamp->add_option("model", *model, "the model file (world, video, value or MLP model)")
      ->required()
      ->check(CLI::ExistingFile);
  stamp
      ->add_option("--out", *out,
                   "where to write the stamped model (default: replace the model file, "
                   "atomically)")
      ->check(OutputFileInExistingDirectory());
  stamp->callback([stamped_task, model, out] {
    RunStamp(*stamped_task, *model, out->empty() ? *model : *out);
  });
}

}  // namespace dfmpc::cli
